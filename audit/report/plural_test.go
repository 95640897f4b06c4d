package report

import "testing"

// TestVerdictBasisPlurals checks the counts of the verdict's basis in each
// language: 1 takes the singular ("1 cycle", "in 1 ciclo"), other numbers
// the plural.
func TestVerdictBasisPlurals(t *testing.T) {
	tests := []struct {
		lang                    string
		requests, pages, cycles int
		want                    string
	}{
		{"en", 1, 1, 1, "Checked: 1 request, 1 of them a page request, in 1 cycle."},
		{"en", 5, 3, 2, "Checked: 5 requests, 3 of them page requests, in 2 cycles."},
		{"it", 1, 1, 1, "Verificate: 1 richiesta, di cui 1 di pagina, in 1 ciclo."},
		{"it", 5, 0, 2, "Verificate: 5 richieste, di cui 0 di pagine, in 2 cicli."},
		{"da", 1, 1, 1, "Kontrolleret: 1 forespørgsel, heraf 1 sideforespørgsel, i 1 cyklus."},
		{"hu", 2, 1, 1, "Ellenőrizve: 2 kérés, ebből 1 oldalkérés, 1 ciklusban."},
	}
	for _, tt := range tests {
		r := &Report{Status: Status{Requests: tt.requests, PageRequests: tt.pages, Cycles: tt.cycles}}
		if got := verdictBasis(words(tt.lang), r); got != tt.want {
			t.Errorf("%s %d/%d/%d: %q, want %q", tt.lang, tt.requests, tt.pages, tt.cycles, got, tt.want)
		}
	}
}

// TestSourceTranslated checks that where an exclusion came from is shown
// in the report's language, not as the stored word.
func TestSourceTranslated(t *testing.T) {
	for _, src := range []string{"mail", "review", "cli"} {
		if got := sourceWord(words("it"), src); got == src {
			t.Errorf("source %q in Italian: %q, want it translated", src, got)
		}
	}
	if got := sourceWord(words("it"), "demo"); got != "demo" {
		t.Errorf("unknown source shown as %q, want it as stored", got)
	}
}
