package botpage

import (
	"regexp"
	"slices"
)

// CatalogKeys returns the message keys of lang's catalog, for the test
// that every language has every text.
func CatalogKeys(lang Lang) ([]string, error) {
	cats, err := loadCatalogs()
	if err != nil {
		return nil, err
	}
	return cats[lang].keys(), nil
}

var placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)

// Placeholders returns, for every text of lang, the {names} in all its
// forms, sorted and without duplicates.
func Placeholders(lang Lang) (map[string][]string, error) {
	cats, err := loadCatalogs()
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for key, m := range cats[lang].msgs {
		var names []string
		for _, s := range []string{m.one, m.other} {
			for _, sm := range placeholder.FindAllStringSubmatch(s, -1) {
				names = append(names, sm[1])
			}
		}
		slices.Sort(names)
		out[key] = slices.Compact(names)
	}
	return out, nil
}

// ClientAddr exports clientAddr.
var ClientAddr = clientAddr
