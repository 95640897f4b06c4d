package mailbot_test

import (
	"testing"

	"github.com/lohisoft/lohibot/mailbot"
)

// A message from attacker.example asking to exclude victim-shop.com, with
// a forged Authentication-Results header claiming a DKIM pass for it.
const forgedBody = `From: Web Master <webmaster@victim-shop.com>
To: message@lohisoft.com
Subject: stop crawling
Message-ID: <forged@attacker.example>
Date: Tue, 10 Mar 2026 10:00:00 +0100

Please stop crawling victim-shop.com.
`

const (
	forged   = "Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=victim-shop.com; spf=pass smtp.mailfrom=webmaster@victim-shop.com\n"
	ourAR    = "Authentication-Results: mx1.lohisoft.com; dkim=none; spf=pass smtp.mailfrom=bounce@attacker.example\n"
	ourHop   = "Received: from attacker.example (attacker.example [203.0.113.9]) by mx1.lohisoft.com (Postfix) with ESMTPS id 4A; Tue, 10 Mar 2026 09:00:01 +0000\n"
	theirHop = "Received: from pc (unknown [198.51.100.7]) by smtp.attacker.example (Postfix) with ESMTPSA id 9Z; Tue, 10 Mar 2026 09:00:00 +0000\n"
	// An internal hop of our MTA (a content filter re-injecting on
	// loopback), even with a HELO claiming anything.
	loopHop = "Received: from localhost (localhost [127.0.0.1]) by mx1.lohisoft.com (Postfix) with ESMTP id 5B; Tue, 10 Mar 2026 09:00:02 +0000\n"
	// A HELO of "localhost" from an outside address is not internal.
	fakeLoopHop = "Received: from localhost (attacker.example [203.0.113.9]) by mx1.lohisoft.com (Postfix) with ESMTP id 4A; Tue, 10 Mar 2026 09:00:01 +0000\n"
)

func TestForgedAuthenticationResults(t *testing.T) {
	tests := []struct {
		name       string
		header     string
		authservID string
		verified   bool   // Verified("victim-shop.com")
		domain     string // Auth.Domain
	}{
		{"forged below our own header", ourAR + ourHop + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged below our hop, our MTA added none", ourHop + forged, "mx1.lohisoft.com", false, ""},
		{"forged below a HELO localhost hop", fakeLoopHop + forged, "mx1.lohisoft.com", false, ""},
		{"forged below the sender's own hop", ourAR + ourHop + theirHop + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged with another server's id", ourAR + "Authentication-Results: mx1.lohisoft.com.evil.example; dkim=pass header.d=victim-shop.com\n", "mx1.lohisoft.com", false, "attacker.example"},
		{"no authserv-id configured trusts none", forged + ourHop, "", false, ""},
		{"a different configured id trusts none", forged + ourHop, "mx.lohisoft.com", false, ""},
		// The genuine cases: our server's header, on top.
		{"genuine on top", forged + ourHop, "mx1.lohisoft.com", true, "victim-shop.com"},
		{"genuine above an internal hop", loopHop + forged + ourHop, "mx1.lohisoft.com", true, "victim-shop.com"},
		{"genuine below Delivered-To", "Delivered-To: message@lohisoft.com\n" + forged + ourHop, "MX1.lohisoft.com.", true, "victim-shop.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.ParseTrusting([]byte(tc.header+forgedBody), tc.authservID)
			if got := m.Verified("victim-shop.com"); got != tc.verified {
				t.Errorf("Verified(victim-shop.com) = %v, want %v (auth %+v)", got, tc.verified, m.Auth)
			}
			if m.Auth.Domain != tc.domain {
				t.Errorf("Auth.Domain = %q, want %q", m.Auth.Domain, tc.domain)
			}
			if m.Intent != mailbot.IntentExclude {
				t.Errorf("Intent = %q, want exclude", m.Intent)
			}
		})
	}
	// Parse trusts nothing.
	if m := mailbot.Parse([]byte(forged + ourHop + forgedBody)); m.Auth != (mailbot.Auth{}) {
		t.Errorf("Parse (no authserv-id): Auth = %+v, want none", m.Auth)
	}
}

// TestVerifiedNeedsAlignment: a pass for a domain that is not the From
// domain's proves nothing about the site in From.
func TestVerifiedNeedsAlignment(t *testing.T) {
	tests := []struct {
		name, ar string
		site     string
		want     bool
	}{
		{"dkim aligned subdomain", "Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=mail.victim-shop.com\n", "victim-shop.com", true},
		{"spf aligned", "Authentication-Results: mx1.lohisoft.com; dkim=fail header.d=victim-shop.com; spf=pass smtp.mailfrom=b@bounce.victim-shop.com\n", "victim-shop.com", true},
		{"dkim of an ESP only", "Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=esp-mailer.net; spf=pass smtp.mailfrom=b@esp-mailer.net\n", "victim-shop.com", false},
		{"aligned but another site", "Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=victim-shop.com\n", "other-shop.com", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.ParseTrusting([]byte(tc.ar+forgedBody), "mx1.lohisoft.com")
			if got := m.Verified(tc.site); got != tc.want {
				t.Errorf("Verified(%q) = %v, want %v (auth %+v)", tc.site, got, tc.want, m.Auth)
			}
		})
	}
}
