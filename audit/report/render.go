package report

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/db"
	"github.com/lohisoft/lohibot/internal/human"
)

// Formats a report can be written in.
const (
	FormatText = "text"
	FormatJSON = "json"
	FormatHTML = "html"
)

// Formats lists the formats of Write.
func Formats() []string { return []string{FormatText, FormatJSON, FormatHTML} }

// ErrUnknownFormat is wrapped by the error Write returns for a format it
// does not know.
var ErrUnknownFormat = errors.New("report: unknown format")

// Write renders r in format (text, json or html; "" means text) with the
// report's own words in lang (see Languages; "" means English). The JSON
// form is one line and does not depend on lang.
func Write(w io.Writer, r *Report, format, lang string) error {
	switch strings.ToLower(format) {
	case "", FormatText:
		return WriteText(w, r, lang)
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatHTML:
		return WriteHTML(w, r, lang)
	}
	return fmt.Errorf("%w %q (want one of %s)", ErrUnknownFormat, format, strings.Join(Formats(), ", "))
}

// WriteJSON writes r as one line of JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

//go:embed report.html.tmpl
var htmlSource string

// cycleView is a cycle with its timeline, for the HTML template.
type cycleView struct {
	C  *Cycle
	TL *timeline
}

// WriteHTML writes r as one self-contained HTML file: no scripts, no
// external fonts, styles or images; the timelines are inline SVG. Every
// string from a crawled page, a robots.txt or an email goes through
// html/template's contextual escaping.
func WriteHTML(w io.Writer, r *Report, lang string) error {
	lang, err := checkLang(lang)
	if err != nil {
		return err
	}
	t := words(lang)
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"t":       t,
		"when":    human.Time,
		"whenms":  human.TimeMS,
		"site":    human.Site,
		"outcome": func(o string) string { return outcomeWord(t, o) },
		"rule":    func(r string) string { return ruleWord(t, r) },
		"mailw":   func(s string) string { return mailWord(t, s) },
		"reason":  func(s string) string { return cycleReason(t, s) },
		"source":  func(s string) string { return sourceWord(t, s) },
		"ms":      fmtMS,
		"status":  fmtStatus,
		"f":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		"add":     func(a, b float64) float64 { return a + b },
		"sub":     func(a, b float64) float64 { return a - b },
		"short":   shorten,
		"purged":  func(n *db.IndexPurge) string { return fmt.Sprintf(t("index_purged"), n.Pages, n.Anchors) },
	}).Parse(htmlSource)
	if err != nil {
		return fmt.Errorf("report: template: %w", err)
	}
	data := struct {
		Lang          string
		R             *Report
		OK            bool
		Checked       bool
		Basis         string
		Cycles        []cycleView
		ExclusionMail *Mail
	}{Lang: lang, R: r, OK: r.OK(), Checked: r.Checked(), Basis: verdictBasis(t, r)}
	for i := range r.Cycles {
		c := &r.Cycles[i]
		data.Cycles = append(data.Cycles, cycleView{C: c, TL: newTimeline(c, t)})
	}
	if x := r.Status.Exclusion; x != nil && x.MailID != 0 {
		for i := range r.Mail {
			if r.Mail[i].ID == x.MailID {
				data.ExclusionMail = &r.Mail[i]
			}
		}
	}
	var buf strings.Builder
	if err := tmpl.Execute(&buf, data); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// html/template escapes markup but lets control characters through;
	// show them as text, as the text report does.
	if _, err := io.WriteString(w, clean(buf.String(), true)); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// verdictBasis says on what the verdict rests: the counts checked.
func verdictBasis(t func(string) string, r *Report) string {
	return strings.NewReplacer("{requests}", counted(t, "basis_requests", r.Status.Requests),
		"{pages}", counted(t, "basis_pages", r.Status.PageRequests),
		"{cycles}", counted(t, "basis_cycles", r.Status.Cycles)).Replace(t("verdict_basis"))
}

func fmtStatus(s *int) string {
	if s == nil {
		return "–"
	}
	return strconv.Itoa(*s)
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clean makes a crawled or emailed string safe for a terminal or a
// browser: control and format characters (escape sequences among them)
// become visible \x or \u escapes; newlines, carriage returns and tabs
// survive only when multiline is set.
func clean(s string, multiline bool) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return (unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t' || r == '\r'))) || unicode.Is(unicode.Cf, r)
	}) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t' || r == '\r'):
			b.WriteRune(r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
