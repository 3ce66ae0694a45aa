module github.com/usmbridge/usmbridge/gonum

go 1.25.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/usmbridge/usmbridge v0.0.0
	gonum.org/v1/gonum v0.17.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/usmbridge/usmbridge => ../
