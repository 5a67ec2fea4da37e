package reflector

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every reason the reflector gives for a relist, read from its source (a
// state's why, or relist's argument, literal or fmt.Sprintf's format), has
// a named cause: a new reason without one fails here, not on a dashboard.
func TestEveryRelistReasonInTheSourceHasANamedCause(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var reasons []string
	fset := token.NewFileSet()
	for _, name := range files {
		if filepath.Ext(name) != ".go" || len(name) > 8 && name[len(name)-8:] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && id.Name == "why" {
					reasons = append(reasons, literal(n.Value)...)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "relist" && len(n.Args) == 1 {
					reasons = append(reasons, literal(n.Args[0])...)
				}
			}
			return true
		})
	}
	require.GreaterOrEqual(t, len(reasons), 10, "the reasons were found")
	for _, why := range reasons {
		assert.NotEqual(t, CauseOther, RelistCause(why), "reason %q", why)
	}
}

// literal returns the string a reason expression starts from: a string
// literal, or the format of a fmt.Sprintf call. Other expressions (a
// variable passed through) give nothing.
func literal(e ast.Expr) []string {
	if call, ok := e.(*ast.CallExpr); ok && len(call.Args) > 0 {
		e = call.Args[0]
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return nil
	}
	return []string{s}
}

func TestRelistCauseNamesTheCauseOfEachKindOfReason(t *testing.T) {
	for detail, cause := range map[string]string{
		`resourceVersion "42" is too old (410 Gone)`:                      CauseExpired,
		"3 continue tokens expired (410 Gone): list the whole collection": CauseExpired,
		"resourceVersion 42 is too large for the server":                  CauseTooLarge,
		"resourceVersion went back to 7":                                  CauseWentBack,
		"retry after a failed list":                                       CauseFailed,
		"the store refused the last list":                                 CauseStoreRefused,
		"something new":                                                   CauseOther,
	} {
		assert.Equal(t, cause, RelistCause(detail), detail)
	}
}
