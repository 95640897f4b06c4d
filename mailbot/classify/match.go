package classify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/lohisoft/lohibot/mailbot/message"
)

// defaultGap is how many other words may come between two steps of a rule.
const defaultGap = 3

// wordAlt is one alternative of a step: an exact word or a stem.
type wordAlt struct {
	word   string
	prefix bool
}

// ruleStep is one position of a phrase: its alternatives and how many
// words may come between it and the previous step.
type ruleStep struct {
	alts []wordAlt
	gap  int
}

// compiledRule is a keywordRule ready to match.
type compiledRule struct {
	lang   string
	phase  int
	weight int
	steps  []ruleStep
	// anyLang: the first step's words are distinctive enough to be tried
	// whatever the language of the text.
	anyLang bool
}

// distinctiveLen is the shortest first-step word or stem that makes a rule
// apply to text in any language.
const distinctiveLen = 5

// ruleSet indexes the rules by their first step.
type ruleSet struct {
	rules  []compiledRule
	exact  map[string][]int // first-step word → rules
	stems  map[string][]int // first-step stem → rules
	minLen int              // shortest stem
	maxLen int              // longest stem
}

// compiledRules returns keywordRules compiled, on first use: a command
// that classifies no mail (a crawl, a fleet's crawlers starting together)
// does not pay for it at start (about 10 ms and 1.6 MB). The result is
// never modified.
var compiledRules = sync.OnceValue(func() *ruleSet {
	return mustCompileRules(slices.Concat(keywordRules, moreRules, conceptRules, europeRules, signalRules), keywordMacros)
})

// mustCompileRules compiles the rule table; a malformed rule is a
// programming error caught by the tests, so it panics.
func mustCompileRules(rules []keywordRule, macros map[string]string) *ruleSet {
	rs := &ruleSet{exact: map[string][]int{}, stems: map[string][]int{}, minLen: 1 << 30}
	for _, kr := range rules {
		cr, err := compileRule(kr, macros)
		if err != nil {
			panic(fmt.Sprintf("mailbot: keyword rule %q: %v", kr.pattern, err))
		}
		idx := len(rs.rules)
		rs.rules = append(rs.rules, cr)
		for _, a := range cr.steps[0].alts {
			if a.prefix {
				rs.stems[a.word] = appendInt(rs.stems[a.word], idx)
				rs.minLen = min(rs.minLen, len(a.word))
				rs.maxLen = max(rs.maxLen, len(a.word))
			} else {
				rs.exact[a.word] = appendInt(rs.exact[a.word], idx)
			}
		}
	}
	return rs
}

func appendInt(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func compileRule(kr keywordRule, macros map[string]string) (compiledRule, error) {
	cr := compiledRule{lang: kr.lang, phase: kr.phase, weight: kr.weight}
	gap := defaultGap
	for _, f := range strings.Fields(kr.pattern) {
		if strings.HasPrefix(f, "~") {
			n, err := strconv.Atoi(f[1:])
			if err != nil || n < 0 {
				return cr, fmt.Errorf("bad gap %q", f)
			}
			gap = n
			continue
		}
		var step ruleStep
		step.gap = gap
		gap = defaultGap
		for _, a := range strings.Split(f, "|") {
			if strings.HasPrefix(a, "{") && strings.HasSuffix(a, "}") {
				m, ok := macros[a[1:len(a)-1]]
				if !ok {
					return cr, fmt.Errorf("unknown macro %s", a)
				}
				for _, ma := range strings.Split(m, "|") {
					step.alts = append(step.alts, parseAlt(ma))
				}
				continue
			}
			if a == "" {
				return cr, fmt.Errorf("empty alternative in %q", f)
			}
			step.alts = append(step.alts, parseAlt(a))
		}
		cr.steps = append(cr.steps, step)
	}
	if len(cr.steps) == 0 {
		return cr, fmt.Errorf("empty rule")
	}
	// Agreement and request words are short ("ja", "si", "tak") but a
	// short reply has too few words to tell its language.
	cr.anyLang = kr.lang == "en" || nonLatin(cr.steps[0].alts[0].word) || kr.phase == phaseAgree || kr.phase == phasePolite
	if !cr.anyLang {
		cr.anyLang = true
		for _, a := range cr.steps[0].alts {
			if len(a.word) < distinctiveLen {
				cr.anyLang = false
			}
		}
	}
	return cr, nil
}

func parseAlt(a string) wordAlt {
	if a == "HOST" {
		return wordAlt{word: tokHost}
	}
	if strings.HasSuffix(a, "*") {
		return wordAlt{word: message.Fold(strings.TrimSuffix(a, "*")), prefix: true}
	}
	return wordAlt{word: message.Fold(a)}
}

// firstMatches returns the rules whose first step matches the folded word.
func (rs *ruleSet) firstMatches(w string) []int {
	var out []int
	out = append(out, rs.exact[w]...)
	for n := rs.minLen; n <= len(w) && n <= rs.maxLen; n++ {
		out = append(out, rs.stems[w[:n]]...)
	}
	return out
}

func (s *ruleStep) matches(w string) bool {
	for _, a := range s.alts {
		if a.prefix {
			if strings.HasPrefix(w, a.word) {
				return true
			}
		} else if w == a.word {
			return true
		}
	}
	return false
}

// matchFrom matches the rule with its first step at toks[start], skipping
// words already used, and returns the positions of its steps.
func (r *compiledRule) matchFrom(toks []token, used []bool, start int) ([]int, bool) {
	pos := []int{start}
	prev := start
	for _, st := range r.steps[1:] {
		found := -1
		skipped := 0
		for j := prev + 1; j < len(toks); j++ {
			w := toks[j].folded
			if w == tokBarrier {
				break
			}
			if !used[j] && (st.matches(w) || toks[j].alt != "" && st.matches(toks[j].alt)) {
				found = j
				break
			}
			skipped++
			if skipped > st.gap {
				break
			}
		}
		if found < 0 {
			return nil, false
		}
		pos = append(pos, found)
		prev = found
	}
	return pos, true
}

// nonLatin reports whether w is written in another script than Latin
// (Greek, Han, kana, Hangul): such words are distinctive whatever the
// language detection says.
func nonLatin(w string) bool {
	for _, r := range w {
		if r >= 0x370 {
			return true
		}
	}
	return false
}
