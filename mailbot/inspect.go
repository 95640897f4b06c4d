package mailbot

import "github.com/lohisoft/lohibot/mailbot/message"

// Inspection is a stored message laid out for staff (see message.Inspection).
type Inspection = message.Inspection

// Attachment is one attached file or message (see message.AttachedFile).
type Attachment = message.AttachedFile

// Inspect lays out raw for staff (see message.Inspect). It does no I/O and
// is safe for concurrent use.
func Inspect(raw []byte) *Inspection { return message.Inspect(raw) }
