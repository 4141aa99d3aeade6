// Package layout checks docs/architecture.md against the module: every package is on the map, and imports
// only what its row allows, all of it earlier in the table (imports point inward).
package layout

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

const module = "github.com/alisio-lsp/alisio-lsp/"

// row is one package of the map.
type row struct {
	pkg     string
	allowed []string
}

var quoted = regexp.MustCompile("`([^`]+)`")

// readMap reads the package table of docs/architecture.md, in order.
func readMap(t *testing.T, path string) []row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		r := row{pkg: strings.Trim(strings.TrimSpace(cells[1]), "`")}
		for _, m := range quoted.FindAllStringSubmatch(cells[3], -1) {
			r.allowed = append(r.allowed, m[1])
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestArchitectureMap: the map of docs/architecture.md names every package of the module and no other, and
// each package imports only module packages its row allows, which come earlier in the table.
func TestArchitectureMap(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rows := readMap(t, filepath.Join(root, "docs", "architecture.md"))
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md has no package table")
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		imports[pkg] = []string{}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	// internal/layout holds only this test, which go list leaves out.
	imports["internal/layout"] = []string{}
	position := map[string]int{}
	for i, r := range rows {
		if _, dup := position[r.pkg]; dup {
			t.Errorf("%s is on the map twice", r.pkg)
		}
		position[r.pkg] = i
	}
	for pkg := range imports {
		if _, ok := position[pkg]; !ok {
			t.Errorf("package %s is not on the map of docs/architecture.md: add a row saying what it owns and what it may import", pkg)
		}
	}
	for _, r := range rows {
		got, ok := imports[r.pkg]
		if !ok {
			t.Errorf("docs/architecture.md names %s, which is not a package of the module", r.pkg)
			continue
		}
		for _, imp := range got {
			if !slices.Contains(r.allowed, imp) {
				t.Errorf("%s imports %s, which its row does not allow", r.pkg, imp)
			}
		}
		for _, a := range r.allowed {
			if p, ok := position[a]; !ok || p >= position[r.pkg] {
				t.Errorf("%s's row allows %s, which is not earlier in the table (imports point inward)", r.pkg, a)
			}
		}
	}
}

// TestWorkflowsLint: the forge's workflows (.github/workflows), which cannot run here, pass actionlint — its
// checks of the workflow syntax, expressions and shell scripts (shellcheck where it is installed).
func TestWorkflowsLint(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", ".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow found (%v)", err)
	}
	var out bytes.Buffer
	linter, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := linter.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatalf("%d problem(s) in the workflows:\n%s", len(errs), out.String())
	}
}
