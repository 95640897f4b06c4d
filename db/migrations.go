package db

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// migrations is the ordered, append-only list of schema changes. Its length is
// the schema version. Never edit or reorder an entry that has been released:
// add a new one. Each entry is SQL run in one transaction together with the
// version bump; {{ID}}, {{TIME}}, {{BLOB}}, {{BIGINT}} and {{EPOCH}} (1970-01-01 UTC as a
// time literal) are replaced by the engine's spelling. A statement that
// starts with {{POSTGRES}} or {{SQLITE}} runs on that engine only.
var migrations = []string{
	// 1: the whole first schema.
	`
CREATE TABLE sites (
	id {{ID}},
	name TEXT NOT NULL UNIQUE,
	start_url TEXT NOT NULL DEFAULT '',
	added_at {{TIME}} NOT NULL,
	added_by TEXT NOT NULL DEFAULT ''
);

CREATE TABLE exclusions (
	site TEXT PRIMARY KEY,
	excluded_at {{TIME}} NOT NULL,
	actor TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	evidence TEXT NOT NULL DEFAULT '',
	source TEXT NOT NULL DEFAULT '',
	event_id {{BIGINT}} NOT NULL
);

CREATE TABLE policy_state (
	id INTEGER PRIMARY KEY,
	version {{BIGINT}} NOT NULL
);
INSERT INTO policy_state (id, version) VALUES (1, 0);

CREATE TABLE policy_events (
	id {{ID}},
	version {{BIGINT}} NOT NULL UNIQUE,
	happened_at {{TIME}} NOT NULL,
	kind TEXT NOT NULL,
	site TEXT NOT NULL,
	actor TEXT NOT NULL DEFAULT '',
	reason TEXT NOT NULL DEFAULT '',
	evidence TEXT NOT NULL DEFAULT '',
	source TEXT NOT NULL DEFAULT '',
	detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX policy_events_site ON policy_events (site, version);

CREATE TABLE mail_messages (
	id {{ID}},
	message_id TEXT NOT NULL UNIQUE,
	received_at {{TIME}} NOT NULL,
	sent_date {{TIME}},
	from_addr TEXT NOT NULL DEFAULT '',
	subject TEXT NOT NULL DEFAULT '',
	intent TEXT NOT NULL DEFAULT '',
	domains TEXT NOT NULL DEFAULT '',
	lang TEXT NOT NULL DEFAULT '',
	auth TEXT NOT NULL DEFAULT '',
	auth_domain TEXT NOT NULL DEFAULT '',
	outcome TEXT NOT NULL DEFAULT '',
	review_status TEXT NOT NULL DEFAULT '',
	review_reason TEXT NOT NULL DEFAULT '',
	reviewed_by TEXT NOT NULL DEFAULT '',
	reviewed_at {{TIME}},
	source TEXT NOT NULL DEFAULT '',
	size {{BIGINT}} NOT NULL DEFAULT 0,
	sha256 TEXT NOT NULL DEFAULT '',
	raw {{BLOB}}
);
CREATE INDEX mail_messages_review ON mail_messages (review_status);

CREATE TABLE crawl_cycles (
	id {{ID}},
	site TEXT NOT NULL,
	node TEXT NOT NULL DEFAULT '',
	started_at {{TIME}} NOT NULL,
	finished_at {{TIME}},
	status TEXT NOT NULL,
	budget INTEGER NOT NULL,
	spent INTEGER NOT NULL DEFAULT 0,
	delay_ms {{BIGINT}} NOT NULL,
	reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX crawl_cycles_site ON crawl_cycles (site, started_at);
CREATE UNIQUE INDEX crawl_cycles_one_running ON crawl_cycles (site) WHERE status = 'running';

CREATE TABLE robots_snapshots (
	id {{ID}},
	origin TEXT NOT NULL,
	fetched_at {{TIME}} NOT NULL,
	status INTEGER NOT NULL DEFAULT 0,
	final_url TEXT NOT NULL DEFAULT '',
	body {{BLOB}},
	sha256 TEXT NOT NULL DEFAULT '',
	outcome TEXT NOT NULL,
	error TEXT NOT NULL DEFAULT '',
	request_id {{BIGINT}}
);
CREATE INDEX robots_snapshots_origin ON robots_snapshots (origin, fetched_at);

CREATE TABLE requests (
	id {{ID}},
	cycle_id {{BIGINT}},
	budget_slot INTEGER,
	site TEXT NOT NULL,
	host TEXT NOT NULL,
	origin TEXT NOT NULL,
	url TEXT NOT NULL,
	method TEXT NOT NULL DEFAULT 'GET',
	purpose TEXT NOT NULL,
	node TEXT NOT NULL DEFAULT '',
	attempt INTEGER NOT NULL DEFAULT 0,
	redirect_of {{BIGINT}},
	robots_snapshot_id {{BIGINT}},
	robots_rule TEXT NOT NULL DEFAULT '',
	robots_line INTEGER NOT NULL DEFAULT 0,
	policy_check TEXT NOT NULL DEFAULT '',
	delay_ms {{BIGINT}} NOT NULL DEFAULT 0,
	sent_at {{TIME}} NOT NULL,
	completed_at {{TIME}},
	status INTEGER,
	bytes {{BIGINT}} NOT NULL DEFAULT 0,
	duration_ms {{BIGINT}} NOT NULL DEFAULT 0,
	retry_after TEXT NOT NULL DEFAULT '',
	retry_not_before {{TIME}},
	outcome TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX requests_site ON requests (site, sent_at);
CREATE INDEX requests_host ON requests (host, sent_at);
CREATE INDEX requests_cycle ON requests (cycle_id);
CREATE UNIQUE INDEX requests_budget_slot ON requests (cycle_id, budget_slot);

CREATE TABLE host_leases (
	host TEXT PRIMARY KEY,
	holder TEXT NOT NULL DEFAULT '',
	expires_at {{TIME}} NOT NULL,
	next_at {{TIME}} NOT NULL
);

CREATE TABLE pages (
	id {{ID}},
	url TEXT NOT NULL UNIQUE,
	site TEXT NOT NULL,
	title TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	h1 TEXT NOT NULL DEFAULT '',
	h2 TEXT NOT NULL DEFAULT '',
	h3 TEXT NOT NULL DEFAULT '',
	status INTEGER NOT NULL DEFAULT 0,
	fetched_at {{TIME}} NOT NULL,
	request_id {{BIGINT}}
);
CREATE INDEX pages_site ON pages (site);

CREATE TABLE anchors (
	id {{ID}},
	from_url TEXT NOT NULL,
	to_url TEXT NOT NULL,
	to_site TEXT NOT NULL,
	anchor_text TEXT NOT NULL DEFAULT '',
	seen_at {{TIME}} NOT NULL,
	request_id {{BIGINT}}
);
CREATE INDEX anchors_to ON anchors (to_url);
CREATE UNIQUE INDEX anchors_pair ON anchors (from_url, to_url, anchor_text);
`,
	// 2: the request log by time alone, for matching a webmaster's access
	// log (which has no host) against it (identity).
	`CREATE INDEX requests_sent_at ON requests (sent_at);`,
	// 3: whether an exclusion is verified: made by staff, or by an email
	// whose sender the receiving server authenticated for the site. The
	// exclusions made by email before this version were judged by headers
	// anyone could forge, so they count as unverified.
	`
ALTER TABLE exclusions ADD COLUMN verified BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE exclusions SET verified = FALSE WHERE source = 'mail';
`,
	// 4: what an exclusion purged from the index, recorded in its policy
	// event; anchors by the site they point to, for that purge.
	`
ALTER TABLE policy_events ADD COLUMN purged_pages {{BIGINT}} NOT NULL DEFAULT 0;
ALTER TABLE policy_events ADD COLUMN purged_anchors {{BIGINT}} NOT NULL DEFAULT 0;
CREATE INDEX anchors_to_site ON anchors (to_site);
`,
	// 5: Web Bot Auth evidence: what each request was signed with, the keys
	// published and when they may sign, and each crawler run's signing key
	// (db/signing.go).
	`
ALTER TABLE requests ADD COLUMN sig_keyid TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN sig_created {{TIME}};
ALTER TABLE requests ADD COLUMN sig_expires {{TIME}};

CREATE TABLE signing_keys (
	keyid TEXT PRIMARY KEY,
	jwk TEXT NOT NULL,
	not_before {{TIME}} NOT NULL,
	not_after {{TIME}},
	recorded_at {{TIME}} NOT NULL
);

CREATE TABLE signing_runs (
	id {{ID}},
	node TEXT NOT NULL,
	keyid TEXT NOT NULL,
	started_at {{TIME}} NOT NULL,
	ended_at {{TIME}}
);
CREATE INDEX signing_runs_node ON signing_runs (node, started_at);
`,
	// 6: what decided a message's classification (mailbot/classify
	// reasons, a JSON array of strings), for staff (mail show, review).
	`ALTER TABLE mail_messages ADD COLUMN reasons TEXT NOT NULL DEFAULT '';`,
	// 7: the replies sent to webmasters (acknowledgements, RFC 3834), with
	// their bytes.
	`
CREATE TABLE mail_replies (
	id {{ID}},
	mail_id {{BIGINT}} NOT NULL,
	kind TEXT NOT NULL,
	recipient TEXT NOT NULL,
	sites TEXT NOT NULL DEFAULT '',
	lang TEXT NOT NULL DEFAULT '',
	message_id TEXT NOT NULL UNIQUE,
	created_at {{TIME}} NOT NULL,
	status TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt_at {{TIME}},
	sent_at {{TIME}},
	last_error TEXT NOT NULL DEFAULT '',
	raw {{BLOB}}
);
CREATE INDEX mail_replies_mail ON mail_replies (mail_id);
CREATE INDEX mail_replies_recipient ON mail_replies (recipient, created_at);
CREATE INDEX mail_replies_due ON mail_replies (status, next_attempt_at);
`,
	// 8: the crawl list at scale. sites.due_since is when the
	// site's recrawl interval started: the start of its last finished
	// cycle, or the epoch when it was never crawled or its last cycle is
	// open (running or stopped with budget left), so the due-site scan is
	// one range of an index however long the list; the last cycle of a
	// site is found by (site, id).
	`
ALTER TABLE sites ADD COLUMN due_since {{TIME}} NOT NULL DEFAULT {{EPOCH}};
UPDATE sites SET due_since = COALESCE((SELECT CASE WHEN c.status = 'done' OR c.spent >= c.budget THEN c.started_at END
	FROM crawl_cycles c WHERE c.site = sites.name ORDER BY c.id DESC LIMIT 1), {{EPOCH}});
CREATE INDEX sites_due ON sites (due_since, name);
CREATE INDEX crawl_cycles_site_id ON crawl_cycles (site, id);
`,
	// 9: conditional recrawls: a page response's validators,
	// sent back as If-None-Match / If-Modified-Since in the next cycle.
	// Response metadata, like retry_after: never page content.
	`
ALTER TABLE requests ADD COLUMN etag TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN last_modified TEXT NOT NULL DEFAULT '';
`,
	// 10: tamper-evident records (db/seal.go): a chain of seal blocks, and
	// the hash of every sealed row with the block that sealed it. Open
	// seals the rows already there, in id order, right after this step.
	`
CREATE TABLE seal_blocks (
	id {{BIGINT}} PRIMARY KEY,
	sealed_at {{TIME}} NOT NULL,
	prev_hash TEXT NOT NULL,
	root TEXT NOT NULL,
	row_count {{BIGINT}} NOT NULL,
	state TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE
);
CREATE TABLE seal_rows (
	tbl TEXT NOT NULL,
	row_id {{BIGINT}} NOT NULL,
	block_id {{BIGINT}} NOT NULL,
	hash TEXT NOT NULL,
	PRIMARY KEY (tbl, row_id)
);
CREATE INDEX seal_rows_block ON seal_rows (block_id, tbl, row_id);
`,
	// 11: a cheaper crawler write path. A site's link texts
	// are written a few pages at a time (crawler: siteRun.anchors), so a
	// cycle taken over after a crash resumes from links_found instead:
	// the same-site links its pages found, one per line, kept while it is
	// open. Two indexes go: requests_cycle, whose lookups
	// requests_budget_slot (cycle_id, budget_slot) serves, and
	// anchors_to, whose lookups by to_url the link-text key serves once
	// it leads with to_url. Every index is written with every row.
	`
ALTER TABLE crawl_cycles ADD COLUMN links_found TEXT NOT NULL DEFAULT '';
DROP INDEX requests_cycle;
CREATE UNIQUE INDEX anchors_link ON anchors (to_url, from_url, anchor_text);
DROP INDEX anchors_pair;
DROP INDEX anchors_to;
`,
	// 12: room on each page of the request log for the completion of the
	// rows inserted there (PostgreSQL only: SQLite updates in place). A
	// row is updated once, soon after its insert, when the page it went to
	// is full: the update then goes to another page and adds an entry to
	// every index of the table. With room left on the page it is a HOT
	// update, which touches no index.
	`{{POSTGRES}}ALTER TABLE requests SET (fillfactor = 70)`,
	// 13: an unverified exclusion keeps the site's index entries (hidden
	// from search, as the site is excluded) until purge_after, so that a
	// stranger's email cannot destroy another site's index at once; NULL
	// means nothing is kept (purged at exclusion, or since). The
	// exclusions made before this version purged at once.
	`ALTER TABLE exclusions ADD COLUMN purge_after {{TIME}};
CREATE INDEX exclusions_purge_after ON exclusions (purge_after);`,
	// 14: discovery from links. A candidate is a site found through links
	// to it from crawled pages; candidate_links holds each (candidate,
	// linking site) pair once, so that linked_from, the number of distinct
	// linking sites, is raised only by pairs inserted for the first time,
	// whichever crawler of a fleet finds them. status is waiting or added
	// (an exclusion is read from exclusions when listed, so that a
	// re-inclusion makes the site eligible again).
	`
CREATE TABLE candidates (
	site TEXT PRIMARY KEY,
	start_url TEXT NOT NULL DEFAULT '',
	linked_from {{BIGINT}} NOT NULL DEFAULT 0,
	first_seen {{TIME}} NOT NULL,
	last_seen {{TIME}} NOT NULL,
	status TEXT NOT NULL DEFAULT 'waiting',
	added_at {{TIME}}
);
CREATE INDEX candidates_eligible ON candidates (status, linked_from);
CREATE INDEX candidates_added ON candidates (added_at);
CREATE TABLE candidate_links (
	site TEXT NOT NULL,
	from_site TEXT NOT NULL,
	PRIMARY KEY (site, from_site)
);
`,
	// 15: the transparency log (db/translog.go), which replaces the seal
	// chain: each leaf's row and salt, the Merkle tree's stored hashes,
	// each evidence table's place in the log, and the verifier keys its
	// checkpoints were signed with. Open starts the log from the chain's
	// head, if any, right after this step.
	`
CREATE TABLE log_leaves (
	idx {{BIGINT}} PRIMARY KEY,
	tbl TEXT NOT NULL,
	row_id {{BIGINT}} NOT NULL,
	salt {{BLOB}} NOT NULL
);
CREATE UNIQUE INDEX log_leaves_row ON log_leaves (tbl, row_id);
CREATE TABLE log_hashes (
	id {{BIGINT}} PRIMARY KEY,
	hash {{BLOB}} NOT NULL
);
CREATE TABLE log_cursor (
	tbl TEXT PRIMARY KEY,
	hw {{BIGINT}} NOT NULL,
	pending TEXT NOT NULL DEFAULT ''
);
CREATE TABLE log_keys (
	vkey TEXT PRIMARY KEY,
	recorded_at {{TIME}} NOT NULL
);
`,
	// 16: the signed checkpoints the log's key holders made, so that a
	// report can carry the latest one with its proofs.
	`
CREATE TABLE log_checkpoints (
	size {{BIGINT}} PRIMARY KEY,
	signed TEXT NOT NULL,
	made_at {{TIME}} NOT NULL
);
`,
	// 17: the URLs robots.txt refused, a bounded number per cycle, for
	// the report (db/refusals.go). Not evidence of a request: not in the
	// transparency log.
	`
CREATE TABLE robots_refusals (
	id {{ID}},
	cycle_id {{BIGINT}} NOT NULL,
	site TEXT NOT NULL,
	url TEXT NOT NULL,
	robots_snapshot_id {{BIGINT}},
	robots_rule TEXT NOT NULL DEFAULT '',
	robots_line INTEGER NOT NULL DEFAULT 0,
	refused_at {{TIME}} NOT NULL
);
CREATE UNIQUE INDEX robots_refusals_url ON robots_refusals (cycle_id, url);
CREATE INDEX robots_refusals_site ON robots_refusals (site, refused_at);
`,
	// 18: on SQLite, candidate_links without a rowid: its key is the
	// table, so a pair is one B-tree insert rather than two (the table's
	// and its key's index). PostgreSQL keeps its table.
	`
{{SQLITE}}CREATE TABLE candidate_links_keyed (
	site TEXT NOT NULL,
	from_site TEXT NOT NULL,
	PRIMARY KEY (site, from_site)
) WITHOUT ROWID;
{{SQLITE}}INSERT INTO candidate_links_keyed (site, from_site) SELECT site, from_site FROM candidate_links;
{{SQLITE}}DROP TABLE candidate_links;
{{SQLITE}}ALTER TABLE candidate_links_keyed RENAME TO candidate_links;
`,
}

// logMigration is the schema version that added the transparency log.
const logMigration = 15

// SchemaVersion is the schema version this lohibot writes.
var SchemaVersion = len(migrations)

func (s *Store) expand(sqlText string) string {
	var r *strings.Replacer
	if s.Dialect == Postgres {
		r = strings.NewReplacer(
			"{{ID}}", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
			"{{TIME}}", "TIMESTAMPTZ",
			"{{BLOB}}", "BYTEA",
			"{{BIGINT}}", "BIGINT",
			"{{EPOCH}}", "'1970-01-01 00:00:00+00'",
		)
	} else {
		r = strings.NewReplacer(
			"{{ID}}", "INTEGER PRIMARY KEY AUTOINCREMENT",
			"{{TIME}}", "TIMESTAMP",
			"{{BLOB}}", "BLOB",
			"{{BIGINT}}", "INTEGER",
			"{{EPOCH}}", "'1970-01-01 00:00:00+00:00'", // the driver's time format
		)
	}
	return r.Replace(sqlText)
}

// migrate brings the schema to SchemaVersion in one transaction, or refuses a
// database written by a newer lohibot without changing it.
func (s *Store) migrate(ctx context.Context) error {
	return s.migrateTo(ctx, len(migrations))
}

func (s *Store) migrateTo(ctx context.Context, target int) error {
	// Fast path, without taking the write lock: already up to date.
	var v int
	if err := s.pool.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v); err == nil {
		if v == target {
			return nil
		}
		if v > target {
			return fmt.Errorf("%w: it is at version %d, this lohibot knows up to %d; upgrade lohibot", ErrTooNew, v, target)
		}
	}
	err := s.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.Dialect == Postgres {
			// Serialise concurrent first opens of one database.
			if err := tx.Exec("SELECT pg_advisory_xact_lock(7726312)").Error; err != nil {
				return err
			}
		}
		if err := tx.Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)").Error; err != nil {
			return err
		}
		var versions []int
		if err := tx.Raw("SELECT version FROM schema_version").Scan(&versions).Error; err != nil {
			return err
		}
		current := 0
		switch len(versions) {
		case 0:
			if err := tx.Exec("INSERT INTO schema_version (version) VALUES (0)").Error; err != nil {
				return err
			}
		case 1:
			current = versions[0]
		default:
			return fmt.Errorf("db: schema_version holds %d rows, want 1", len(versions))
		}
		if current > target {
			return fmt.Errorf("%w: it is at version %d, this lohibot knows up to %d; upgrade lohibot", ErrTooNew, current, target)
		}
		for v := current; v < target; v++ {
			for _, stmt := range splitStatements(s.expand(migrations[v])) {
				// A statement marked {{POSTGRES}} runs on PostgreSQL only,
				// one marked {{SQLITE}} on SQLite only.
				stmt, pgOnly := strings.CutPrefix(stmt, "{{POSTGRES}}")
				stmt, liteOnly := strings.CutPrefix(stmt, "{{SQLITE}}")
				if pgOnly && s.Dialect != Postgres || liteOnly && s.Dialect != SQLite {
					continue
				}
				if err := tx.Exec(stmt).Error; err != nil {
					return fmt.Errorf("migration %d: %w", v+1, err)
				}
			}
		}
		if current != target {
			return tx.Exec("UPDATE schema_version SET version = ?", target).Error
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrTooNew) {
			return err
		}
		return fmt.Errorf("db: migrate: %w", err)
	}
	return nil
}

// Version returns the schema version recorded in the database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&v)
	return v, err
}

func splitStatements(sqlText string) []string {
	var out []string
	for _, part := range strings.Split(sqlText, ";") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}
