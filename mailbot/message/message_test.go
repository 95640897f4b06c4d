package message_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lohisoft/lohibot/mailbot/message"
)

func TestReadSplitsNewQuotedSignature(t *testing.T) {
	raw := "From: A <a@example.org>\nSubject: Re: x\nMessage-ID: <1@x>\n\n" +
		"Yes please.\n\nOn Mon, 9 Mar 2026, LohiSoft <message@lohisoft.com> wrote:\n" +
		"> Shall we remove example.org?\n> Thanks\n\n-- \nA. Person\nwww.example.org\n"
	m := message.Read([]byte(raw))
	if m.New != "Yes please." {
		t.Errorf("Read().New = %q, want %q", m.New, "Yes please.")
	}
	if !strings.Contains(m.Quoted, "Shall we remove example.org?") || !strings.Contains(m.Quoted, "LohiSoft") {
		t.Errorf("Read().Quoted = %q, want the attribution and the quote", m.Quoted)
	}
	if m.QuotedLines != 3 {
		t.Errorf("Read().QuotedLines = %d, want 3", m.QuotedLines)
	}
	if m.From != "a@example.org" || m.MessageID != "1@x" || m.Subject != "Re: x" || !m.BodyRead {
		t.Errorf("Read() header = %q %q %q read %v", m.From, m.MessageID, m.Subject, m.BodyRead)
	}
}

func TestReadSignature(t *testing.T) {
	m := message.Read([]byte("Subject: s\n\nPlease stop crawling our site.\n-- \nJohn\nwww.example.com\n"))
	if m.New != "Please stop crawling our site." || m.Signature != "John\nwww.example.com" {
		t.Errorf("Read() = new %q, signature %q", m.New, m.Signature)
	}
}

// TestReadAttachments reads the certified-mail envelope of the hard set:
// the XML receipt and the attached original are listed as attachments,
// and the original is decoded as a forward.
func TestReadAttachments(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/mail-hard/643-it-pec-envelope.eml")
	if err != nil {
		t.Fatal(err)
	}
	m := message.Read(raw)
	var types []string
	for _, a := range m.Attachments {
		types = append(types, a.Type+" "+a.Name)
	}
	want := []string{"application/xml daticert.xml", "message/rfc822 Richiesta di esclusione hotel-belvedere.it"}
	if strings.Join(types, "|") != strings.Join(want, "|") {
		t.Errorf("Read().Attachments = %q, want %q", types, want)
	}
	if len(m.Forwards) != 1 || !strings.Contains(m.Forwards[0].New, "cessare immediatamente la scansione") {
		t.Errorf("Read().Forwards = %+v, want the attached request", m.Forwards)
	}
}

func TestReadTooLarge(t *testing.T) {
	raw := []byte("Subject: big\nMessage-ID: <big@x>\n\n" + strings.Repeat("x", message.MaxSize))
	m := message.Read(raw)
	if m.BodyRead || !strings.HasPrefix(m.Fatal, "too large") || m.MessageID != "big@x" {
		t.Errorf("Read(too large) = read %v, fatal %q, id %q", m.BodyRead, m.Fatal, m.MessageID)
	}
}

func TestIsReplySubject(t *testing.T) {
	for _, tt := range []struct {
		subject string
		want    bool
	}{
		{"Re: hello", true},
		{"AW: Sperre", true},
		{"[Ticket #48213] Re: removed from the crawl list", true},
		{"Away: Re: removed from the crawl list", true},
		{"Fwd: request", false},
		{"Ats: Jūsų prašymas", true},
		{"Ответ: Ваш запрос", true},
		{"Odgovor: zahtjev", true},
		{"ΑΠ: Το αίτημά σας", true},
		{"Pers: prašymas", false},
		{"Please stop crawling", false},
		{"[list] news", false},
	} {
		if got := message.IsReplySubject(tt.subject); got != tt.want {
			t.Errorf("IsReplySubject(%q) = %v, want %v", tt.subject, got, tt.want)
		}
	}
}

// FuzzRead checks that Read never panics and that its texts are valid
// UTF-8, with New, Quoted and Signature taken from Text.
//
//	go test ./mailbot/message -run '^$' -fuzz FuzzRead -fuzztime 1m
func FuzzRead(f *testing.F) {
	for _, dir := range []string{"../../testdata/mail", "../../testdata/mail-hard"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
		for _, name := range files {
			raw, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(raw)
		}
	}
	f.Add([]byte("Subject: x\n\n> a\nOn x wrote:\n-- \n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := message.Read(raw)
		for name, s := range map[string]string{"New": m.New, "Quoted": m.Quoted, "Signature": m.Signature, "Subject": m.Subject} {
			if !utf8.ValidString(s) {
				t.Fatalf("Read().%s = %q, not UTF-8", name, s)
			}
		}
		if len(m.New) > len(m.Text) || len(m.Quoted) > len(m.Text) {
			t.Fatalf("Read(): new (%d) or quoted (%d) longer than the text (%d)", len(m.New), len(m.Quoted), len(m.Text))
		}
		if m.Size != len(raw) {
			t.Fatalf("Read().Size = %d, want %d", m.Size, len(raw))
		}
	})
}

// TestNewTextCutsQuotes checks that our quoted message below a separator
// or an attribution, in the languages of our correspondents, is left out
// of the new text even when its lines are not marked with ">".
func TestNewTextCutsQuotes(t *testing.T) {
	for _, a := range []string{
		"-----Ursprüngliche Nachricht-----", "-----Message d'origine-----", "-----Originalmeddelande-----",
		"-----Opprinnelig melding-----", "-----Alkuperäinen viesti-----", "-----Wiadomość oryginalna-----",
		"Am 03.03.2026 um 10:02 schrieb LohiSoft <message@lohisoft.com>:",
		"El mar, 3 mar 2026 a las 10:02, LohiSoft (<message@lohisoft.com>) escribió:",
		"W dniu wt., 3.03.2026 o 10:02 LohiSoft <message@lohisoft.com> napisał(a):",
		"LohiSoft <message@lohisoft.com> ezt írta (időpont: 2026. márc. 3., K, 10:02):",
		"From: LohiSoft <message@lohisoft.com>\nSent: Tuesday, March 3, 2026 10:02\nTo: x@example.com\nSubject: Re: x",
		// By shape, in languages whose words no list holds: an
		// attribution with an address and a date, a header block naming
		// a sender and a date.
		"2026-07-14, antr., 09:12 LohiSoft <message@lohisoft.com> rašė:",
		"T, 14. juuli 2026 kell 9:12 kirjutas LohiSoft:",
		"Από: LohiSoft <message@lohisoft.com>\nΣτάλθηκε: Τρίτη, 3 Μαρτίου 2026 10:02 πμ\nΠρος: x@example.gr\nΘέμα: Re: x",
		"Kimden: LohiSoft <message@lohisoft.com>\nGönderildi: 3 Mart 2026 Salı 10:02\nKime: x@example.com\nKonu: x",
		"Від: LohiSoft <message@lohisoft.com>\nНадіслано: 3 березня 2026 р. 10:02\nКому: x@example.com.ua\nТема: x",
		"Saatja: LohiSoft\nSaadetud: 3. märts 2026 10:02\nAdressaat: Mari\nTeema: Re: x",
	} {
		text := "Please crawl example.com again.\n\n" + a + "\nWe removed example.com. Please stop crawling example.com.\n"
		if got, q := message.NewText(text, false); got != "Please crawl example.com again." || !strings.Contains(q.Text, "We removed") {
			t.Errorf("NewText(… %q …) = %q, quoted %q", a, got, q.Text)
		}
	}
}

// TestNewTextKeepsFormsAndForwards checks what the quote shapes must not
// take: a contact form's "Label: value" lines (no date), a line ending
// with a colon without a date and time, and text forwarded inline below a
// Gmail marker in a language the phrase list does not hold.
func TestNewTextKeepsFormsAndForwards(t *testing.T) {
	for _, text := range []string{
		"Name: Jan Novak\nEmail: jan@example.cz\nWebsite: www.example.cz\nMessage: Please stop crawling example.cz.",
		"Please stop crawling example.cz and these sites of ours since 2026:\nexample.sk",
		"Dobrý deň,\nplease stop crawling example.cz now.\nut 3. 3. 2026 o 10:02 LohiSoft <message@lohisoft.com> napísal(a):\n> We crawl example.sk.",
		"Please act on this.\n\n---------- Proslijeđena poruka ---------\nOd: Ana <ana@example.hr>\nDate: pon, 30. stu 2026. u 08:47\nSubject: x\nTo: Ivan <ivan@example.hr>\n\nPlease stop crawling example.cz.",
	} {
		if got, _ := message.NewText(text, false); !strings.Contains(got, "stop crawling example.cz") {
			t.Errorf("NewText(%q) = %q, want the request kept", text, got)
		}
	}
}
