package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAptMirror holds scripts/apt-mirror.sh, which gives
// scripts/setup-46-sid.sh the Debian mirror the machine's apt already
// uses, to sample apt configurations: the one-line and deb822 formats,
// options in brackets, comments, deb-src, disabled stanzas, files apt
// ignores, security and other vendors' suites, and apt's order of files.
func TestAptMirror(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, _ := filepath.Abs("../scripts/apt-mirror.sh")
	for _, c := range []struct {
		name     string
		files    map[string]string
		codename string
		want     string // "" for none
	}{
		{"deb822, as Debian 12 ships it", map[string]string{
			"sources.list.d/debian.sources": "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n" +
				"Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n",
			"sources.list.d/vendor.list.disabled-by-farm": "deb https://ignored.example/debian bookworm main\n",
		}, "bookworm", "http://mirror.example/debian"},
		{"one-line, with options, comments and deb-src", map[string]string{
			"sources.list": "# deb http://commented.example/debian bookworm main\n" +
				"deb-src http://src.example/debian bookworm main\n" +
				"deb [ arch=amd64 signed-by=/k.gpg ] http://security.example/debian-security bookworm-security main\n" +
				"deb [arch=amd64] http://one.example/debian/ bookworm main contrib # trailing\n",
		}, "bookworm", "http://one.example/debian"},
		{"other vendors' suites are not Debian's", map[string]string{
			"sources.list.d/a-vendor.list": "deb https://vendor.example/apt cloud-sdk-bookworm main\n",
			"sources.list.d/b.sources":     "Types: deb\nURIs: https://nodes.example/node\nSuites: nodistro\n",
		}, "bookworm", ""},
		{"a disabled stanza, then a deb822 continuation line", map[string]string{
			"sources.list.d/a.sources": "Types: deb\nURIs: http://off.example/debian\nSuites: sid\nEnabled: no\n",
			"sources.list.d/b.sources": "Types: deb deb-src\nURIs: http://two.example/debian\n http://three.example/debian\nSuites: unstable\n",
		}, "", "http://two.example/debian"},
		{"sources.list before sources.list.d, whose files go by name", map[string]string{
			"sources.list":             "deb http://first.example/debian trixie main\n",
			"sources.list.d/0.sources": "Types: deb\nURIs: http://second.example/debian\nSuites: trixie\n",
		}, "trixie", "http://first.example/debian"},
		{"only URIs debootstrap reads", map[string]string{
			"sources.list": "deb cdrom:[Debian]/ bookworm main\ndeb mirror+file:/etc/apt/mirrors.txt bookworm main\ndeb file:/srv/debian bookworm main\n",
		}, "bookworm", "file:/srv/debian"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "sources.list.d"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.Command(bash, "-c", `. "$1" && apt_mirror "$2" "$3"`, "bash", script, dir, c.codename).Output()
			got := strings.TrimSpace(string(out))
			if c.want == "" {
				if err == nil || got != "" {
					t.Errorf("apt_mirror = %q, %v; want none (failure)", got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("apt_mirror = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
