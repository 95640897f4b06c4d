package botpage

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"
	"time"
)

//go:embed page.html.tmpl
var pageTemplate string

//go:embed page.css
var pageCSS string

// rfc9309 is where the robots.txt standard is published.
const rfc9309 = "https://www.rfc-editor.org/rfc/rfc9309"

// Page renders the bot page. It holds the parsed template and the texts of
// every language; it is safe for concurrent use and does no I/O.
type Page struct {
	tmpl       *template.Template
	statusTmpl *template.Template // the status page (status.go)
	cats       map[Lang]*catalog
	// styleSrc is the Content-Security-Policy source that allows the
	// page's one inline style sheet and nothing else.
	styleSrc string
}

// NewPage parses the page template and the texts of every language.
func NewPage() (*Page, error) {
	cats, err := loadCatalogs()
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("page").Option("missingkey=error").Parse(pageTemplate)
	if err != nil {
		return nil, fmt.Errorf("botpage: %w", err)
	}
	statusTmpl, err := template.New("status").Option("missingkey=error").Funcs(template.FuncMap{
		"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	}).Parse(statusTemplate)
	if err != nil {
		return nil, fmt.Errorf("botpage: %w", err)
	}
	sum := sha256.Sum256([]byte(pageCSS))
	return &Page{
		tmpl:       tmpl,
		statusTmpl: statusTmpl,
		cats:       cats,
		styleSrc:   "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'",
	}, nil
}

// ContentSecurityPolicy returns the policy the page is served with: no
// scripts, no external resources, only its own inline style sheet.
func (p *Page) ContentSecurityPolicy() string {
	return "default-src 'none'; style-src " + p.styleSrc + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// Render writes the page in lang stating f. It checks f first and writes
// nothing when f fails the check or the page cannot be rendered, so a
// caller that renders into a buffer never serves half a page.
func (p *Page) Render(w io.Writer, lang Lang, f *Facts) error {
	cat, ok := p.cats[lang]
	if !ok {
		return fmt.Errorf("botpage: no language %q", lang)
	}
	if err := f.Check(); err != nil {
		return err
	}
	v := p.view(cat, f)
	var buf bytes.Buffer
	if err := p.tmpl.Execute(&buf, v); err != nil {
		return fmt.Errorf("botpage: render %s: %w", lang, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// view is what the template reads.
type view struct {
	Lang        Lang
	T           *translator
	F           *Facts
	Langs       []langLink
	Product     string
	Description string
	Style       template.CSS
	UserAgents  []uaView

	RobotsSnippet string
	Example       string
	RFC           template.HTML // a link to RFC 9309
	ContactLink   template.HTML // a mailto link
	Suffix        template.HTML // .bot.lohisoft.com, as code
	Bare          template.HTML // .lohisoft.com, as code
	StatusPath    string        // the status page, linked from the page
	SigAgent      template.HTML // the Signature-Agent field as sent, as code
}

// langLink is one entry of the language links.
type langLink struct {
	Lang    Lang
	Name    string // the language's own name
	Rel     string // ?lang=xx, relative to the page
	Abs     string // the page's public URL with ?lang=xx
	Current bool
}

type uaView struct {
	String string
	Label  string // the message key of its status
}

func (p *Page) view(cat *catalog, f *Facts) *view {
	t := &translator{c: cat}
	v := &view{
		Lang:    cat.lang,
		T:       t,
		F:       f,
		Product: f.Product(),
		Style:   template.CSS(pageCSS),

		StatusPath: StatusPath,
	}
	for _, l := range Langs() {
		name, _ := p.cats[l].msgs["lang_name"]
		v.Langs = append(v.Langs, langLink{
			Lang:    l,
			Name:    name.other,
			Rel:     "?lang=" + string(l),
			Abs:     withLang(f.URL, l),
			Current: l == cat.lang,
		})
	}
	for _, ua := range f.UserAgents {
		label := "ua_in_use"
		switch ua.Status {
		case RollingOut:
			label = "ua_rolling_out"
		case Older:
			label = "ua_older"
		}
		v.UserAgents = append(v.UserAgents, uaView{String: ua.String, Label: label})
	}
	desc, _ := t.T("intro", "bot", f.Bot, "operator", f.Operator)
	v.Description = htmlToText(string(desc))
	v.RobotsSnippet = "User-agent: " + f.Bot + "\nDisallow: /"
	first := f.Crawlers[0]
	v.Example = fmt.Sprintf("$ dig +short -x %s\n%s.\n$ dig +short %s\n%s", first.IP, first.Host, first.Host, first.IP)
	v.RFC = template.HTML(`<a href="` + rfc9309 + `">RFC 9309</a>`)
	v.ContactLink = template.HTML(`<a href="mailto:` + template.HTMLEscapeString(f.Contact) + `">` + template.HTMLEscapeString(f.Contact) + `</a>`)
	suffix := "." + strings.TrimPrefix(f.BotDomain, ".")
	bare := suffix
	if _, parent, ok := strings.Cut(strings.TrimPrefix(suffix, "."), "."); ok {
		bare = "." + parent
	}
	v.Suffix = template.HTML("<code>" + template.HTMLEscapeString(suffix) + "</code>")
	v.Bare = template.HTML("<code>" + template.HTMLEscapeString(bare) + "</code>")
	v.SigAgent = template.HTML("<code>Signature-Agent: sig1=&#34;" + template.HTMLEscapeString(f.SignatureAgent) + "&#34;</code>")
	return v
}

// withLang returns the page URL u with ?lang=l.
func withLang(u string, l Lang) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.RawQuery = url.Values{"lang": {string(l)}}.Encode()
	return p.String()
}

// htmlToText undoes fill's escaping for an attribute value that
// html/template escapes again.
func htmlToText(s string) string {
	r := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&amp;", "&")
	return r.Replace(s)
}
