package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot/policy"
)

var siteTests = []struct {
	in   string
	want string // "" means refused
	why  string // a word the error must contain when refused
}{
	{"example.com", "example.com", ""},
	{"WWW.Example.COM.", "example.com", ""},
	{"  www.example.com  ", "example.com", ""},
	{"https://WWW.Shop.Example.co.uk/x", "example.co.uk", ""},
	{"https://shop.example.co.uk:8443/x?y", "example.co.uk", ""},
	{"http://example.com", "example.com", ""},
	{"HTTP://EXAMPLE.COM/Path", "example.com", ""},
	{"example.com/path/to?q=1#frag", "example.com", ""},
	{"example.com:8080", "example.com", ""},
	{"//cdn.example.net/lib.js", "example.net", ""},
	{"http://user:pass@www.example.org/", "example.org", ""},
	{"bücher.de", "xn--bcher-kva.de", ""},
	{"BÜCHER.DE", "xn--bcher-kva.de", ""},
	{"https://www.bücher.de/katalog", "xn--bcher-kva.de", ""},
	{"xn--bcher-kva.de", "xn--bcher-kva.de", ""},
	{"例え.jp", "xn--r8jz45g.jp", ""},
	{"alice.github.io", "alice.github.io", ""},
	{"https://alice.github.io/blog/", "alice.github.io", ""},
	{"sub.alice.github.io", "alice.github.io", ""},
	{"myblog.blogspot.com", "myblog.blogspot.com", ""},
	{"shop.example.com.au", "example.com.au", ""},
	{"a.b.c.example.com.br", "example.com.br", ""},
	{"example.test", "example.test", ""},
	{"münchen.example.de", "example.de", ""},
	{"ｅｘａｍｐｌｅ．ｃｏｍ", "example.com", ""},
	{"", "", "empty"},
	{"   ", "", "empty"},
	{"co.uk", "", "public suffix"},
	{"github.io", "", "public suffix"},
	{"com", "", "com is a top-level domain"},
	{"COM.", "", "public suffix"},
	{"localhost", "", "not under a known top-level domain"},
	{"notadomain", "", "not under a known top-level domain"},
	{"https://co.uk/", "", "public suffix"},
	{"1.2.3.4", "", "IP address"},
	{"http://192.168.0.1:8080/", "", "IP address"},
	{"[::1]", "", "IP address"},
	{"http://[2001:db8::1]/", "", "IP address"},
	{"10.1", "", "IP address"},
	{"ftp://example.com", "", "scheme"},
	{"mailto:webmaster@example.com", "", "scheme"},
	{"javascript:alert(1)", "", "scheme"},
	{"exa mple.com", "", "host name"},
	{"-bad.example.com", "", "host name"},
	{"ex_ample.com", "", "host name"},
	{"a..com", "", "host name"},
	{"example.com..", "", "label"},
	{"*.example.com", "", "host name"},
	{"xn--zz.com", "", "host name"},
	{strings.Repeat("a", 64) + ".com", "", "host name"},
	{"http://", "", "host"},
	{"https://example.com:99999/", "", "port"},
	{"example.com:99999", "", `bad port "99999"`},
	{"example.com:99999/x", "", `bad port "99999"`},
	{"example.com:abc", "", `bad port "abc"`},
	{"example.com:", "", `bad port ""`},
	{"example.com:0", "", `bad port "0"`},
	{"https://example.com:0/", "", `bad port "0"`},
	{"https://example.com:abc/", "", `bad port "abc"`},
	{"https://example.com:-1/", "", `bad port "-1"`},
	{"http://user:pass@example.com:99999/", "", `bad port "99999"`},
	{"https://example.com:/", "example.com", ""},
	{"bob@example.org", "example.org", ""},
	{"http://bob:s3cret@co.uk/", "", "public suffix"},
	{"https://example.com:65535/", "example.com", ""},
}

func TestSiteOf(t *testing.T) {
	for _, tt := range siteTests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := policy.SiteOf(tt.in)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("SiteOf(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("SiteOf(%q) = %q, want an error about %q", tt.in, got, tt.why)
			}
			if !errors.Is(err, policy.ErrBadSite) {
				t.Errorf("SiteOf(%q) error %v does not wrap ErrBadSite", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("SiteOf(%q) error = %q, want it to say %q", tt.in, err, tt.why)
			}
		})
	}
}

func TestSiteOfCount(t *testing.T) {
	if len(siteTests) < 40 {
		t.Fatalf("only %d site cases; the issue asks for at least 40", len(siteTests))
	}
}

func FuzzSiteOf(f *testing.F) {
	for _, tt := range siteTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		site, err := policy.SiteOf(in)
		if err != nil {
			if site != "" {
				t.Fatalf("SiteOf(%q) returned %q with error %v", in, site, err)
			}
			return
		}
		again, err := policy.SiteOf(site)
		if err != nil || again != site {
			t.Fatalf("SiteOf(SiteOf(%q)) = %q, %v; want %q", in, again, err, site)
		}
		if site != strings.ToLower(site) || strings.HasSuffix(site, ".") {
			t.Fatalf("SiteOf(%q) = %q is not lowercase without trailing dot", in, site)
		}
	})
}

// TestSiteErrorHidesCredentials: a refused input is quoted without the
// credentials it carried.
func TestSiteErrorHidesCredentials(t *testing.T) {
	for _, in := range []string{"http://bob:s3cret@co.uk/", "bob:s3cret@co.uk", "//bob:s3cret@1.2.3.4/", "bob:s3cret@example.com:99999",
		"bob.smith:s3cret@example.com", "http://bob:s3cret@example.com:99999/"} {
		_, err := policy.SiteOf(in)
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("SiteOf(%q) = %v, want an error without the password", in, err)
		}
	}
}

func TestWithoutUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:pw@x.com/a@b":  "http://x.com/a@b",
		"u:pw@x.com":             "x.com",
		"//u@x.com/":             "//x.com/",
		"https://u:p@w@x.com:8/": "https://x.com:8/",
		"x.com/mail@me":          "x.com/mail@me",
		"example.com":            "example.com",
	} {
		if got := policy.WithoutUserinfo(in); got != want {
			t.Errorf("WithoutUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
