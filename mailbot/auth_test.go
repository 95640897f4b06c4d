package mailbot_test

import (
	"strings"
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
	// A message submitted on the sender's own server: no from clause, by
	// a name that is not ours.
	theirPickup = "Received: by smtp.attacker.example (Postfix, from userid 1000)\n\tid 7C; Tue, 10 Mar 2026 08:59:59 +0000\n"
	// A hop by an address, received from somewhere: not an internal one.
	addrHopFrom = "Received: from pc ([198.51.100.7]) by 198.51.100.8 with SMTP; Tue, 10 Mar 2026 08:59:59 +0000\n"
)

func TestForgedAuthenticationResults(t *testing.T) {
	tests := []struct {
		name       string
		header     string
		authservID string
		verified   bool   // Verified("victim-shop.com")
		domain     string // Auth.Domain
	}{
		// Our server reported DKIM and SPF itself: the forged header below
		// reports them again and is ignored.
		{"forged below our own header", ourAR + ourHop + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged below our own header, below our hop", ourHop + ourAR + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged below the sender's own hop", ourAR + ourHop + theirHop + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged below the sender's own hop, ours added none", ourHop + theirHop + forged, "mx1.lohisoft.com", false, ""},
		{"forged below the sender's submission hop", ourHop + ourAR + theirPickup + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged below an address hop with a from clause", ourHop + ourAR + addrHopFrom + forged, "mx1.lohisoft.com", false, "attacker.example"},
		{"forged with another server's id", ourAR + "Authentication-Results: mx1.lohisoft.com.evil.example; dkim=pass header.d=victim-shop.com\n", "mx1.lohisoft.com", false, "attacker.example"},
		{"no authserv-id configured trusts none", forged + ourHop, "", false, ""},
		{"a different configured id trusts none", forged + ourHop, "mx.lohisoft.com", false, ""},
		// The genuine cases: our server's header, on top or just below our
		// own Received headers.
		{"genuine on top", forged + ourHop, "mx1.lohisoft.com", true, "victim-shop.com"},
		{"genuine above an internal hop", loopHop + forged + ourHop, "mx1.lohisoft.com", true, "victim-shop.com"},
		{"genuine below Delivered-To", "Delivered-To: message@lohisoft.com\n" + forged + ourHop, "MX1.lohisoft.com.", true, "victim-shop.com"},
		{"genuine below our hand-over (Postfix with a milter)", ourHop + forged, "mx1.lohisoft.com", true, "victim-shop.com"},
		{"genuine below our hand-over and an internal hop", loopHop + ourHop + forged + theirHop, "mx1.lohisoft.com", true, "victim-shop.com"},
		{"genuine below another host of our cluster", strings.Replace(loopHop, "by mx1.", "by mx2.", 1) + ourHop + forged, "mx1.lohisoft.com", true, "victim-shop.com"},
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

// Real header orders (abridged from delivered messages): where Gmail and
// Postfix with OpenDKIM write their results relative to their own Received
// headers. The genuine header is read; a forged one further down is not.
func TestRealHeaderOrders(t *testing.T) {
	const body = "From: Web Master <webmaster@victim-shop.com>\nTo: message@lohisoft.com\nSubject: stop\n" +
		"Message-ID: <m1@victim-shop.com>\n\nPlease stop crawling victim-shop.com.\n"
	gmail := "Delivered-To: message@lohisoft.com\n" +
		"Received: by 2002:a05:7108:8c8:b0:3a9:8bba:8f9a with SMTP id e8csp1234567gdq;\n        Tue, 10 Mar 2026 02:00:02 -0700 (PDT)\n" +
		"X-Received: by 2002:a17:90a:6d01:b0:2c9:a3ca:cc9a with SMTP id z1mr123;\n        Tue, 10 Mar 2026 02:00:02 -0700 (PDT)\n" +
		"ARC-Seal: i=1; a=rsa-sha256; t=1773133202; cv=none; d=google.com; s=arc-20240605; b=AAAA\n" +
		"ARC-Authentication-Results: i=1; mx.google.com;\n       dkim=pass header.i=@victim-shop.com header.s=s1 header.b=AbCd;\n       spf=pass smtp.mailfrom=webmaster@victim-shop.com\n" +
		"Return-Path: <webmaster@victim-shop.com>\n" +
		"Received: from mail.victim-shop.com (mail.victim-shop.com. [203.0.113.5])\n        by mx.google.com with ESMTPS id a1si123.2026.03.10.02.00.01\n        for <message@lohisoft.com>\n        (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256);\n        Tue, 10 Mar 2026 02:00:02 -0700 (PDT)\n" +
		"Received-SPF: pass (google.com: domain of webmaster@victim-shop.com designates 203.0.113.5 as permitted sender) client-ip=203.0.113.5;\n" +
		"Authentication-Results: mx.google.com;\n       dkim=pass header.i=@victim-shop.com header.s=s1 header.b=AbCd;\n       spf=pass (google.com: domain of webmaster@victim-shop.com designates 203.0.113.5 as permitted sender) smtp.mailfrom=webmaster@victim-shop.com;\n       dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=victim-shop.com\n" +
		"DKIM-Signature: v=1; a=rsa-sha256; d=victim-shop.com; s=s1; h=from:to:subject; bh=x; b=y\n"
	postfix := "Return-Path: <webmaster@victim-shop.com>\n" +
		"Delivered-To: message@lohisoft.com\n" +
		"Received: from mail.victim-shop.com (mail.victim-shop.com [203.0.113.5])\n\tby mx1.lohisoft.com (Postfix) with ESMTPS id 4F2A1C0DE1\n\tfor <message@lohisoft.com>; Tue, 10 Mar 2026 09:00:01 +0000 (UTC)\n" +
		"Authentication-Results: mx1.lohisoft.com; dmarc=pass (p=reject dis=none) header.from=victim-shop.com\n" +
		"Authentication-Results: mx1.lohisoft.com;\n\tdkim=pass (2048-bit key; unprotected) header.d=victim-shop.com header.i=@victim-shop.com header.b=\"AbCdEfGh\";\n\tdkim-atps=neutral\n" +
		"DKIM-Signature: v=1; a=rsa-sha256; d=victim-shop.com; s=s1; h=from:to:subject; bh=x; b=y\n"
	forgedPostfix := strings.Replace(strings.Replace(postfix, "dkim=pass (2048-bit key; unprotected)", "dkim=none", 1),
		"dmarc=pass (p=reject dis=none)", "dmarc=fail (p=reject dis=none)", 1) +
		"Authentication-Results: mx1.lohisoft.com; dkim=pass header.d=victim-shop.com; dmarc=pass header.from=victim-shop.com\n"
	forgedGmail := strings.Replace(gmail, "dkim=pass header.i=@victim-shop.com header.s=s1 header.b=AbCd;\n       spf=pass (google",
		"dkim=none;\n       spf=softfail (google", 1) +
		"Authentication-Results: mx.google.com; dkim=pass header.d=victim-shop.com; spf=pass smtp.mailfrom=webmaster@victim-shop.com\n"
	for _, tc := range []struct {
		name, header, id string
		verified         bool
	}{
		{"gmail", gmail, "mx.google.com", true},
		{"postfix with opendkim and opendmarc", postfix, "mx1.lohisoft.com", true},
		{"postfix, forged pass below ours", forgedPostfix, "mx1.lohisoft.com", false},
		{"gmail, forged pass below ours", forgedGmail, "mx.google.com", false},
		{"gmail header, our id elsewhere", gmail, "mx1.lohisoft.com", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mailbot.ParseTrusting([]byte(tc.header+body), tc.id)
			if got := m.Verified("victim-shop.com"); got != tc.verified {
				t.Errorf("Verified(victim-shop.com) = %v, want %v (auth %+v)", got, tc.verified, m.Auth)
			}
		})
	}
}
