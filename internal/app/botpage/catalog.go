package botpage

import (
	"embed"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

//go:embed messages/*.toml
var messageFiles embed.FS

// message is one text of a catalog. Plain texts have only other; plural
// texts have one (n == 1, in the languages that use it) and other.
type message struct {
	one, other string
	plural     bool
}

// catalog holds the texts of one language.
type catalog struct {
	lang   Lang
	msgs   map[string]message
	months []string // January first
	date   string   // the date pattern: {day} {month} {year}
}

// loadCatalogs reads the embedded catalogs of every language.
func loadCatalogs() (map[Lang]*catalog, error) {
	cats := make(map[Lang]*catalog)
	for _, l := range Langs() {
		raw, err := messageFiles.ReadFile("messages/" + string(l) + ".toml")
		if err != nil {
			return nil, fmt.Errorf("botpage: %w", err)
		}
		c, err := parseCatalog(l, raw)
		if err != nil {
			return nil, err
		}
		cats[l] = c
	}
	return cats, nil
}

// parseCatalog reads one catalog: keys to strings, or to tables with the
// plural forms one and other; months (twelve names) and date (the date
// pattern).
func parseCatalog(l Lang, raw []byte) (*catalog, error) {
	var doc map[string]any
	if err := toml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("botpage: messages/%s.toml: %w", l, err)
	}
	c := &catalog{lang: l, msgs: make(map[string]message, len(doc))}
	bad := func(key, why string) error {
		return fmt.Errorf("botpage: messages/%s.toml: %s: %s", l, key, why)
	}
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		switch v := doc[key].(type) {
		case string:
			if key == "date" {
				c.date = v
				continue
			}
			c.msgs[key] = message{other: v}
		case map[string]any:
			var m message
			m.plural = true
			for form, s := range v {
				str, ok := s.(string)
				if !ok {
					return nil, bad(key, "plural form "+form+" is not a string")
				}
				switch form {
				case "one":
					m.one = str
				case "other":
					m.other = str
				default:
					return nil, bad(key, "unknown plural form "+form)
				}
			}
			if m.other == "" {
				return nil, bad(key, "no other form")
			}
			c.msgs[key] = m
		case []any:
			if key != "months" || len(v) != 12 {
				return nil, bad(key, "a list, and only months is a list of twelve names")
			}
			for _, s := range v {
				str, ok := s.(string)
				if !ok {
					return nil, bad(key, "a month name is not a string")
				}
				c.months = append(c.months, str)
			}
		default:
			return nil, bad(key, fmt.Sprintf("unsupported value %T", v))
		}
	}
	if c.months == nil || c.date == "" {
		return nil, fmt.Errorf("botpage: messages/%s.toml: months and date are required", l)
	}
	return c, nil
}

// keys returns the catalog's message keys, sorted.
func (c *catalog) keys() []string { return slices.Sorted(maps.Keys(c.msgs)) }

// pick returns the text of key for the count n: the one form when the
// language has it and n is 1, else the other form.
func (m message) pick(n int) string {
	if n == 1 && m.one != "" {
		return m.one
	}
	return m.other
}

// translator gives a template the texts of one language. Texts are plain
// text: they are escaped, and their {name} placeholders are replaced by the
// arguments, escaped too unless they are template.HTML built by the page
// itself.
type translator struct {
	c *catalog
}

// T returns the text of key with its placeholders filled from args, given
// as name, value pairs.
func (t *translator) T(key string, args ...any) (template.HTML, error) {
	m, ok := t.c.msgs[key]
	if !ok {
		return "", fmt.Errorf("botpage: no text %q in %s", key, t.c.lang)
	}
	return fill(m.other, args)
}

// N returns the plural text of key for the count n, which fills {n}.
func (t *translator) N(key string, n int, args ...any) (template.HTML, error) {
	m, ok := t.c.msgs[key]
	if !ok {
		return "", fmt.Errorf("botpage: no text %q in %s", key, t.c.lang)
	}
	return fill(m.pick(n), append([]any{"n", n}, args...))
}

// Date writes d (its date only, as stored) the way the language writes
// dates.
func (t *translator) Date(d time.Time) string {
	s := t.c.date
	s = strings.ReplaceAll(s, "{day}", strconv.Itoa(d.Day()))
	s = strings.ReplaceAll(s, "{month}", t.c.months[d.Month()-1])
	s = strings.ReplaceAll(s, "{year}", strconv.Itoa(d.Year()))
	return s
}

// fill escapes text and replaces each {name} in it by the value paired with
// name in args. A placeholder without a value is an error, so a text can
// never show a raw {name}.
func fill(text string, args []any) (template.HTML, error) {
	if len(args)%2 != 0 {
		return "", fmt.Errorf("botpage: odd number of arguments for %q", text)
	}
	vals := make(map[string]string, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		name, ok := args[i].(string)
		if !ok {
			return "", fmt.Errorf("botpage: argument name %v is not a string", args[i])
		}
		switch v := args[i+1].(type) {
		case template.HTML:
			vals[name] = string(v)
		case string:
			vals[name] = template.HTMLEscapeString(v)
		case int:
			vals[name] = strconv.Itoa(v)
		default:
			vals[name] = template.HTMLEscapeString(fmt.Sprint(v))
		}
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(text, '{')
		if open < 0 {
			b.WriteString(template.HTMLEscapeString(text))
			break
		}
		end := strings.IndexByte(text[open:], '}')
		if end < 0 {
			return "", fmt.Errorf("botpage: unclosed placeholder in %q", text)
		}
		name := text[open+1 : open+end]
		v, ok := vals[name]
		if !ok {
			return "", fmt.Errorf("botpage: no value for {%s}", name)
		}
		b.WriteString(template.HTMLEscapeString(text[:open]))
		b.WriteString(v)
		text = text[open+end+1:]
		if strings.HasSuffix(v, ".") && strings.HasPrefix(text, ".") {
			text = text[1:] // "operated by LohiSoft s.r.o." ends the sentence
		}
	}
	return template.HTML(b.String()), nil
}
