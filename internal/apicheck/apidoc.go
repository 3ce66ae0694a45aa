package apicheck

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// APIDoc is docs/api.md read back: for each package section ("## name
// (count)"), the count its heading states and the exports its tables
// list in their first column (`Name` or `Type.Method`, several to a row).
// Sections whose heading is not of that form (prose, "What moved") are
// not read.
type APIDoc map[string]APIDocSection

// APIDocSection is one package's part of docs/api.md.
type APIDocSection struct {
	Count   int
	Exports []string // in the order listed; a name listed twice appears twice
}

var (
	apiDocHeading = regexp.MustCompile(`^## ([a-z][a-z0-9/]*) \((\d+)\)\s*$`)
	apiDocName    = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")
)

// ParseAPIDoc reads docs/api.md.
func ParseAPIDoc(r io.Reader) (APIDoc, error) {
	doc := APIDoc{}
	cur := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			cur = ""
			if m := apiDocHeading.FindStringSubmatch(line); m != nil {
				if _, dup := doc[m[1]]; dup {
					return nil, fmt.Errorf("package %s has two sections", m[1])
				}
				n, _ := strconv.Atoi(m[2])
				cur = m[1]
				doc[cur] = APIDocSection{Count: n}
			}
			continue
		}
		if cur == "" || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		s := doc[cur]
		for _, m := range apiDocName.FindAllStringSubmatch(cells[1], -1) {
			s.Exports = append(s.Exports, m[1])
		}
		doc[cur] = s
	}
	return doc, sc.Err()
}
