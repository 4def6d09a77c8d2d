package guard

import (
	"errors"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxPathBytes bounds a path the gate normalises.
const MaxPathBytes = 4096

// ErrPath is the error of a path that cannot be normalised.
var ErrPath = errors.New("path cannot be normalised")

func pathErr(why string) error { return errors.New(ErrPath.Error() + ": " + why) }

// NormalizePath returns p lexically cleaned: repeated slashes collapsed,
// "." removed, ".." resolved (an absolute path cannot climb above "/"). It
// refuses, with an error wrapping ErrPath's text, what it cannot name
// unambiguously: the empty path, paths longer than MaxPathBytes, invalid
// UTF-8, NUL and control bytes, backslashes (a separator on Windows),
// percent-encoded bytes (an executor may decode them), strings changed by
// Unicode NFKC normalisation (fullwidth solidus, one-dot leader and the
// like) and a relative path that climbs out of its directory. A leading
// "~" stays a path element: the home directory is unknown to the gate, so
// rules about homes are written "**/.ssh/**".
func NormalizePath(p string) (string, error) { return normalizePath(p, false) }

// normalizePath is NormalizePath; nfc (FilePolicy.NFC) reads a path that
// differs from its NFC form only canonically as that form.
func normalizePath(p string, nfc bool) (string, error) {
	switch {
	case p == "":
		return "", pathErr("empty")
	case len(p) > MaxPathBytes:
		return "", pathErr("longer than 4096 bytes")
	case !utf8.ValidString(p):
		return "", pathErr("not valid UTF-8")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c < 0x20 || c == 0x7f:
			return "", pathErr("control or NUL byte")
		case c == '\\':
			return "", pathErr("backslash")
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			return "", pathErr("percent-encoded byte")
		}
	}
	if !norm.NFKC.IsNormalString(p) {
		if c := norm.NFC.String(p); nfc && c == norm.NFKC.String(p) {
			return normalizePath(c, false)
		}
		return "", pathErr("changed by Unicode compatibility normalisation")
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", pathErr("relative path climbs out of its directory")
	}
	return c, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// MatchGlob reports whether the normalised path p matches pattern, a
// slash-separated glob: "**" as a whole element matches zero or more
// elements, any other element is matched by path.Match ("*", "?",
// classes) against one element. A pattern that does not start with "/"
// or "**" matches relative to any directory only through a leading "**/".
// A malformed pattern matches nothing (patterns are checked at
// registration by ValidGlob).
func MatchGlob(pattern, p string) bool {
	return matchElems(strings.Split(pattern, "/"), strings.Split(p, "/"))
}

func matchElems(pat, p []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(p); i++ {
				if matchElems(rest, p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], p[0])
		if err != nil || !ok {
			return false
		}
		pat, p = pat[1:], p[1:]
	}
	return len(p) == 0
}

// ValidGlob checks a pattern of MatchGlob: not empty, at most
// MaxPathBytes, no "**" inside an element, every element a valid
// path.Match pattern, at most 8 "**" elements (matching is then bounded).
func ValidGlob(pattern string) error {
	if pattern == "" || len(pattern) > MaxPathBytes || !utf8.ValidString(pattern) {
		return errors.New("empty, too long or not UTF-8")
	}
	stars := 0
	for _, e := range strings.Split(pattern, "/") {
		if e == "**" {
			stars++
			continue
		}
		if strings.Contains(e, "**") {
			return errors.New("'**' must be a whole path element")
		}
		if _, err := path.Match(e, ""); err != nil {
			return errors.New("element '" + e + "' is not a valid pattern")
		}
	}
	if stars > 8 {
		return errors.New("more than 8 '**' elements")
	}
	return nil
}

// FileOp is what a file action does to its path.
type FileOp int

// The file operations.
const (
	FileRead FileOp = iota
	FileWrite
	FileDelete
)

// sensitiveRule is one path denied by default: for every operation, or
// only for writes and deletes.
type sensitiveRule struct {
	glob      string
	writeOnly bool
	why       string
}

// sensitive is the list of system and credential paths denied by default.
var sensitive = []sensitiveRule{
	{"/etc/shadow", false, "password hashes"},
	{"/etc/shadow-", false, "password hashes"},
	{"/etc/gshadow", false, "group password hashes"},
	{"/etc/gshadow-", false, "group password hashes"},
	{"/etc/sudoers", false, "privilege configuration"},
	{"/etc/sudoers.d/**", false, "privilege configuration"},
	{"/etc/ssh/*_key", false, "host private keys"},
	{"/etc/passwd", true, "account database"},
	{"/etc/group", true, "account database"},
	{"/etc/**", true, "system configuration"},
	{"/boot/**", true, "boot files"},
	{"/usr/**", true, "system files"},
	{"/bin/**", true, "system files"},
	{"/sbin/**", true, "system files"},
	{"/lib/**", true, "system files"},
	{"/proc", false, "kernel interface"},
	{"/proc/**", false, "kernel interface"},
	{"/sys", false, "kernel interface"},
	{"/sys/**", false, "kernel interface"},
	{"/dev/**", false, "devices"},
	{"/root", false, "the superuser's home"},
	{"/root/**", false, "the superuser's home"},
	{"/var/run/secrets/**", false, "orchestrator secrets"},
	{"/run/secrets/**", false, "orchestrator secrets"},
	{"**/.ssh", false, "SSH keys"},
	{"**/.ssh/**", false, "SSH keys"},
	{"**/.gnupg/**", false, "GnuPG keys"},
	{"**/.aws/**", false, "cloud credentials"},
	{"**/.config/gcloud/**", false, "cloud credentials"},
	{"**/.azure/**", false, "cloud credentials"},
	{"**/.kube/config", false, "cluster credentials"},
	{"**/.docker/config.json", false, "registry credentials"},
	{"**/.netrc", false, "credentials"},
	{"**/.pgpass", false, "credentials"},
	{"**/.git-credentials", false, "credentials"},
	{"**/.npmrc", false, "credentials"},
	{"**/.pypirc", false, "credentials"},
	{"**/.env", false, "environment secrets"},
	{"**/.env.*", false, "environment secrets"},
	{"**/id_rsa", false, "private key"},
	{"**/id_ed25519", false, "private key"},
	{"**/id_ecdsa", false, "private key"},
	{"**/*.pem", false, "key material"},
	{"**/*.key", false, "key material"},
	{"**/.bash_history", false, "shell history"},
	{"**/.zsh_history", false, "shell history"},
}

// FilePolicy is an agent's path policy. Empty AllowedRoots allow every
// path the defaults and DeniedGlobs do not deny; otherwise the path must
// be absolute and lie in one of the roots (a root is itself a normalised
// absolute path: "/srv/data" allows "/srv/data" and what is under it,
// never "/srv/database").
//
// FoldCase matches the paths denied by default and DeniedGlobs without
// regard to ASCII case, as a case-insensitive file system (macOS's and
// Windows' defaults) opens them: "/Users/ann/.SSH/authorized_keys" is
// "~/.ssh". Allowed roots are still compared exactly (a path spelled in
// another case than its root is refused: fail closed).
//
// NFC reads a path that differs from its NFC form only canonically — the
// decomposed names macOS's HFS+ gives ("Cafe\u0301") — as that NFC form
// instead of refusing it; a compatibility difference (fullwidth solidus)
// is still refused. Matching the NFC form keeps canonical singletons from
// hiding a name: "\u212Aube" (KELVIN SIGN) is "Kube".
type FilePolicy struct {
	AllowedRoots []string
	DeniedGlobs  []string
	FoldCase     bool
	NFC          bool
	// PrincipalRoots are the agent's principal's allowed roots: a path
	// must also lie in one of them when there are any (the two lists
	// intersect). The principal's denied globs are among DeniedGlobs.
	PrincipalRoots []string
}

// FileFinding is why a path is refused.
type FileFinding struct {
	// Path is the normalised path ("" when it could not be normalised).
	Path string
	// Rule names what refused it: "unnormalisable", "sensitive_path",
	// "denied_path" or "outside_allowed_roots".
	Rule   string
	Reason string
}

// CheckFile decides a file operation on raw under p: nil when it may
// proceed, else the first rule that refuses it. Order: normalisation,
// the sensitive defaults, the denied globs, the principal's allowed
// roots, the agent's.
func CheckFile(p FilePolicy, op FileOp, raw string) *FileFinding {
	n, err := normalizePath(raw, p.NFC)
	if err != nil {
		return &FileFinding{Rule: "unnormalisable", Reason: err.Error()}
	}
	m := n
	if p.FoldCase {
		m = strings.ToLower(n)
	}
	for _, s := range sensitive {
		if (!s.writeOnly || op != FileRead) && MatchGlob(s.glob, m) {
			return &FileFinding{Path: n, Rule: "sensitive_path", Reason: n + " is denied by default (" + s.why + ")"}
		}
	}
	for _, g := range p.DeniedGlobs {
		if p.FoldCase {
			g = strings.ToLower(g)
		}
		if MatchGlob(g, m) {
			return &FileFinding{Path: n, Rule: "denied_path", Reason: n + " matches the denied pattern " + g}
		}
	}
	if !underAny(p.PrincipalRoots, n) {
		return &FileFinding{Path: n, Rule: "outside_allowed_roots", Reason: n + " is outside the principal's allowed roots"}
	}
	if !underAny(p.AllowedRoots, n) {
		return &FileFinding{Path: n, Rule: "outside_allowed_roots", Reason: n + " is outside the agent's allowed roots"}
	}
	return nil
}

// underAny reports whether the normalised path n lies in one of roots, or
// roots is empty.
func underAny(roots []string, n string) bool {
	if len(roots) == 0 {
		return true
	}
	for _, r := range roots {
		if n == r || r == "/" || strings.HasPrefix(n, r+"/") {
			return true
		}
	}
	return false
}

// ValidRoot checks an allowed root: absolute and already normalised.
func ValidRoot(r string) error {
	n, err := NormalizePath(r)
	if err != nil {
		return err
	}
	if n != r || !strings.HasPrefix(r, "/") {
		return errors.New("'" + r + "' is not a normalised absolute path")
	}
	return nil
}
