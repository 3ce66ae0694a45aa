module github.com/usmbridge/usmbridge

go 1.25.0
