// Package classify decides what a decoded email (package
// mailbot/message) asks of LohiSoftBot: its language, its intent
// (exclude, reinclude, other, auto), the sites it names, and the reasons
// that decided, for staff. It reads only the sender's new text (and the
// subject unless it is a reply's), so our own quoted words never count as
// the sender's request; a short reply agreeing to a question in our
// quoted message takes that question's direction. A request whose
// direction or scope is unclear (a question, part of a site, a negation,
// something other than a site, both directions) is other, with an
// "unclear: …" reason, so that it goes to staff and nothing is applied.
//
// Words are matched by per-language keyword rules (keywords.go,
// signals.go) on folded tokens (lowercase, without diacritics). It does no
// I/O and keeps no state.
package classify
