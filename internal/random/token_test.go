package random_test

import (
	"testing"

	"github.com/listwatch/informer/internal/random"
)

func tokens(t *testing.T, keys ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		tok, err := random.Token(k, 4)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = tok
	}
	return out
}

func TestASeededTokenOfAKeyIsTheSameWhateverOrderTheKeysDrawIn(t *testing.T) {
	restore := random.Seed(3)
	first := tokens(t, "web/r0", "web/r1", "web/r0")
	restore()
	restore = random.Seed(3)
	defer restore()
	second := tokens(t, "web/r1", "web/r0")
	if first["web/r1"] != second["web/r1"] {
		t.Fatalf("web/r1's first token was %s, then %s drawn first", first["web/r1"], second["web/r1"])
	}
	if len(first["web/r0"]) != 8 {
		t.Fatalf("a 4-byte token is 8 hex digits, got %q", first["web/r0"])
	}
}

func TestTheTokensOfOneKeyDoNotRepeat(t *testing.T) {
	restore := random.Seed(3)
	defer restore()
	seen := map[string]bool{}
	for range 100 {
		tok := tokens(t, "web/r0")["web/r0"]
		if seen[tok] {
			t.Fatalf("token %s drawn twice for one key", tok)
		}
		seen[tok] = true
	}
}

func TestUnseededTokensDiffer(t *testing.T) {
	a, b := tokens(t, "k")["k"], tokens(t, "k")["k"]
	if a == b {
		t.Fatalf("two unseeded tokens were both %s", a)
	}
}
