package guard

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLBytes bounds a URL the gate parses.
const MaxURLBytes = 8192

// Target is a URL's destination after normalisation.
type Target struct {
	// Scheme is lower case.
	Scheme string
	// Host is lower case, without trailing dots or brackets; an IP
	// literal is in its canonical form (IPv4 dotted decimal for every
	// inet_aton spelling and for IPv4-mapped IPv6).
	Host string
	// Addr is the address of an IP literal host (invalid for a name).
	Addr netip.Addr
	// Port is the explicit port, else the scheme's default (0 if none).
	Port int
}

var defaultPorts = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

func urlErr(why string) error { return errors.New("URL cannot be normalised: " + why) }

// ParseTarget parses raw strictly and normalises its destination. The
// host name is converted to its ASCII form by NormalizeHost (UTS #46
// mapping, IDNA2008 validation, A-labels), so a fullwidth or otherwise
// disguised name or IPv4 address is read as what it maps to. It refuses
// URLs over MaxURLBytes, with control bytes, spaces or backslashes,
// without a scheme or host, with userinfo (credentials in a URL leak, and
// "allowed.example@evil.example" confuses readers), with a host
// NormalizeHost refuses, with a percent-encoded or zoned host, with a
// host whose last label is numeric but not an IPv4 address, or with an
// invalid port.
func ParseTarget(raw string) (Target, error) { return parseTarget(raw, false) }

// ParseTargetASCII is ParseTarget as it was before host names were
// mapped: a non-ASCII host is refused (send the A-label) and an "xn--"
// label is not decoded. It decides the URLs of logs written before
// Config.IDNHosts.
func ParseTargetASCII(raw string) (Target, error) { return parseTarget(raw, true) }

func parseTarget(raw string, asciiOnly bool) (Target, error) {
	if raw == "" || len(raw) > MaxURLBytes {
		return Target{}, urlErr("empty or longer than 8192 bytes")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= 0x20 || c == 0x7f || c == '\\' {
			return Target{}, urlErr("control byte, space or backslash")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, urlErr("unparsable")
	}
	if u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return Target{}, urlErr("no scheme or host")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return Target{}, urlErr("userinfo is refused")
	}
	t := Target{Scheme: strings.ToLower(u.Scheme)}
	host, port := u.Hostname(), u.Port()
	if strings.ContainsAny(host, "%") {
		return Target{}, urlErr("percent-encoded or zoned host")
	}
	if strings.HasSuffix(u.Host, ":") {
		return Target{}, urlErr("empty port")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return Target{}, urlErr("invalid port")
		}
		t.Port = n
	} else {
		t.Port = defaultPorts[t.Scheme]
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return Target{}, urlErr("invalid IPv6 literal")
		}
		t.Addr = canonicalAddr(a)
		t.Host = t.Addr.String()
		return t, nil
	}
	if asciiOnly {
		if !isASCII(host) {
			return Target{}, urlErr("non-ASCII host (use its xn-- form)")
		}
		host = strings.TrimRight(strings.ToLower(host), ".")
		if host == "" {
			return Target{}, urlErr("empty host")
		}
	} else {
		h, err := NormalizeHost(host)
		if err != nil {
			return Target{}, urlErr("host " + err.Error())
		}
		host = h
	}
	labels := strings.Split(host, ".")
	if last := labels[len(labels)-1]; last != "" && numericLabel(last) {
		a, ok := parseIPv4(labels)
		if !ok {
			return Target{}, urlErr("numeric host that is not an IPv4 address")
		}
		t.Addr, t.Host = a, a.String()
		return t, nil
	}
	for _, l := range labels {
		if !validLabel(l) {
			return Target{}, urlErr("invalid host label '" + l + "'")
		}
	}
	t.Host = host
	return t, nil
}

// numericLabel reports whether l reads as a number to inet_aton (and to
// WHATWG URL parsers): decimal digits, or 0x followed by hex digits.
func numericLabel(l string) bool {
	if strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0X") {
		for i := 2; i < len(l); i++ {
			if !isHex(l[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return l != ""
}

// parseIPv4 reads 1-4 labels as inet_aton does: each decimal, octal
// (leading 0) or hexadecimal (0x), the last filling the remaining bytes.
func parseIPv4(labels []string) (netip.Addr, bool) {
	if len(labels) > 4 {
		return netip.Addr{}, false
	}
	var parts []uint64
	for _, l := range labels {
		v, ok := parseNum(l)
		if !ok {
			return netip.Addr{}, false
		}
		parts = append(parts, v)
	}
	var ip uint64
	for i, v := range parts[:len(parts)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		ip |= v << (24 - 8*uint(i))
	}
	last := parts[len(parts)-1]
	if last >= 1<<(8*uint(5-len(parts))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

func parseNum(l string) (uint64, bool) {
	base, digits := 10, l
	switch {
	case strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0X"):
		base, digits = 16, l[2:]
		if digits == "" {
			return 0, true // "0x" is zero to inet_aton
		}
	case len(l) > 1 && l[0] == '0':
		base, digits = 8, l[1:]
	}
	if digits == "" || len(digits) > 32 {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 64)
	return v, err == nil
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// canonicalAddr unmaps IPv4-mapped IPv6 and reads the IPv4 address out of
// the IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96) forms, which
// reach the embedded IPv4 address on hosts that route them.
func canonicalAddr(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		compat := !a.IsLoopback() && !a.IsUnspecified()
		for _, x := range b[:12] {
			compat = compat && x == 0
		}
		if compat || nat64.Contains(a) {
			return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
	}
	return a
}

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// nonPublic are the ranges denied by default beside what netip
	// classifies (loopback, private, link-local, multicast, unspecified).
	nonPublic = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("240.0.0.0/4"),
		netip.MustParsePrefix("fec0::/10"),
		netip.MustParsePrefix("2002::/16"),
		netip.MustParsePrefix("100::/64"),
	}
	// strictReserved are ranges EgressPolicy.Strict also denies: local-use
	// NAT64 (RFC 8215, which reaches the IPv4 address it embeds as the
	// well-known prefix does), IPv4-translated addresses (RFC 2765),
	// Teredo and the IETF protocol assignments (2001::/23), and the IPv6
	// documentation ranges.
	strictReserved = []netip.Prefix{
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("::ffff:0:0:0/96"),
		netip.MustParsePrefix("2001::/23"),
		netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("3fff::/20"),
	}
	// internalSuffixes are the last labels of names that are not public
	// under EgressPolicy.Strict: special-use and private-use names (RFC
	// 6761 "localhost", RFC 6762 "local", RFC 8375 "home.arpa", ICANN's
	// "internal"), the names in common use on private networks
	// ("localdomain", "lan", "intranet", "corp") and Kubernetes' "svc"
	// (service.namespace.svc, resolved through the search list).
	internalSuffixes = []string{"local", "localdomain", "internal", "intranet", "lan", "corp", "home.arpa", "svc"}
	// metadataAddrs are cloud metadata services: never reachable.
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"),
		netip.MustParseAddr("169.254.170.2"),
		netip.MustParseAddr("100.100.100.200"),
		netip.MustParseAddr("fd00:ec2::254"),
	}
	// metadataHosts are the names of cloud metadata services.
	metadataHosts = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal", "metadata.azure.com"}
)

// ClassifyAddr names why addr is not a public unicast address ("" when
// it is): "metadata", "loopback", "private", "link_local", "multicast",
// "unspecified" or "reserved".
func ClassifyAddr(a netip.Addr) string {
	a = canonicalAddr(a)
	for _, m := range metadataAddrs {
		if a == m {
			return "metadata"
		}
	}
	switch {
	case !a.IsValid(), a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link_local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast(), a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "multicast"
	case a.IsPrivate():
		return "private"
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return "reserved"
		}
	}
	return ""
}

// EgressPolicy is an agent's network policy. AllowedHosts entries are
// host names ("api.example.com"), wildcard suffixes ("*.example.com":
// subdomains only) or IP literals; empty allows every public host.
// AllowedSchemes empty means http and https; AllowedPorts empty means
// any port.
//
// Strict also refuses, as non-public addresses, the names a private
// resolver answers — a host name of one label ("redis", "vault": resolved
// through the search list) and the special-use and private-use suffixes
// (internalSuffixes: "*.svc.cluster.local", "*.internal") — and the IPv6
// ranges of strictReserved; AllowedHosts can name them as it names a
// private address.
type EgressPolicy struct {
	AllowedHosts   []string
	AllowedSchemes []string
	AllowedPorts   []int
	Strict         bool
	// PrincipalHosts, PrincipalSchemes and PrincipalPorts are the agent's
	// principal's lists, read as the agent's are: a URL must be admitted
	// by every non-empty list of both (they intersect); the default
	// schemes (http, https) apply when both scheme lists are empty.
	PrincipalHosts   []string
	PrincipalSchemes []string
	PrincipalPorts   []int
	// ASCIIHosts parses URLs with ParseTargetASCII (non-ASCII hosts
	// refused, "xn--" labels not decoded), as before Config.IDNHosts;
	// false: ParseTarget. AllowedHosts are compared as given: they are
	// normalised at registration (NormalizeHostEntry).
	ASCIIHosts bool
}

// NetFinding is why a URL is refused.
type NetFinding struct {
	// Host is the normalised host ("" when the URL could not be parsed).
	Host string
	// Rule names what refused it: "unnormalisable", "scheme_not_allowed",
	// "port_not_allowed", "metadata_address", "non_public_address"
	// (Reason says which class) or "host_not_allowed".
	Rule   string
	Reason string
}

// CheckURL decides a request to raw under p: nil when it may proceed.
// Cloud metadata addresses and names are refused always; loopback,
// private, link-local and reserved addresses and localhost names unless
// AllowedHosts names that host exactly; under p.Strict, internal names
// unless AllowedHosts names them, exactly or by a "*." suffix. With the
// principal's lists, every non-empty hosts list (the agent's, the
// principal's) must admit the host that way.
func CheckURL(p EgressPolicy, raw string) *NetFinding {
	t, err := parseTarget(raw, p.ASCIIHosts)
	if err != nil {
		return &NetFinding{Rule: "unnormalisable", Reason: err.Error()}
	}
	schemeOK := containsFold(p.AllowedSchemes, t.Scheme) || len(p.AllowedSchemes) == 0 && len(p.PrincipalSchemes) > 0
	schemeOK = schemeOK && (len(p.PrincipalSchemes) == 0 || containsFold(p.PrincipalSchemes, t.Scheme))
	if len(p.AllowedSchemes) == 0 && len(p.PrincipalSchemes) == 0 {
		schemeOK = t.Scheme == "http" || t.Scheme == "https"
	}
	if !schemeOK {
		return &NetFinding{Host: t.Host, Rule: "scheme_not_allowed", Reason: "scheme '" + t.Scheme + "' is not allowed"}
	}
	for _, ports := range [2][]int{p.PrincipalPorts, p.AllowedPorts} {
		if len(ports) > 0 && !containsInt(ports, t.Port) {
			return &NetFinding{Host: t.Host, Rule: "port_not_allowed", Reason: "port " + strconv.Itoa(t.Port) + " is not allowed"}
		}
	}
	class := ""
	if t.Addr.IsValid() {
		class = ClassifyAddr(t.Addr)
		if class == "" && p.Strict && inPrefixes(strictReserved, canonicalAddr(t.Addr)) {
			class = "reserved"
		}
	} else if containsFold(metadataHosts, t.Host) {
		class = "metadata"
	} else if t.Host == "localhost" || strings.HasSuffix(t.Host, ".localhost") {
		class = "loopback"
	} else if p.Strict && internalName(t.Host) {
		class = "internal"
	}
	if class == "metadata" {
		return &NetFinding{Host: t.Host, Rule: "metadata_address", Reason: t.Host + " is a cloud metadata service"}
	}
	nonPublic := &NetFinding{Host: t.Host, Rule: "non_public_address", Reason: t.Host + " is a " + strings.ReplaceAll(class, "_", "-") + " address"}
	if class == "internal" {
		nonPublic.Reason = t.Host + " is an internal host name (one label, or a private-use suffix)"
	}
	if len(p.AllowedHosts) == 0 && len(p.PrincipalHosts) == 0 {
		if class != "" {
			return nonPublic
		}
		return nil
	}
	for _, l := range [2]struct {
		hosts []string
		whose string
	}{{p.PrincipalHosts, "principal's"}, {p.AllowedHosts, "agent's"}} {
		if len(l.hosts) == 0 {
			continue
		}
		matched, exact := false, false
		for _, h := range l.hosts {
			if hostMatches(h, t.Host) {
				matched, exact = true, exact || !strings.HasPrefix(h, "*.")
			}
		}
		switch {
		case class == "internal" && !matched, class != "" && class != "internal" && !exact:
			return nonPublic
		case !matched:
			return &NetFinding{Host: t.Host, Rule: "host_not_allowed", Reason: t.Host + " is not in the " + l.whose + " allowed hosts"}
		}
	}
	return nil
}

// internalName reports whether a normalised host name is not public: one
// label, or a special-use or private-use suffix (internalSuffixes).
func internalName(host string) bool {
	if !strings.Contains(host, ".") {
		return true
	}
	for _, s := range internalSuffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			return true
		}
	}
	return false
}

func inPrefixes(list []netip.Prefix, a netip.Addr) bool {
	for _, p := range list {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// hostMatches matches a normalised host against an AllowedHosts entry.
func hostMatches(entry, host string) bool {
	if s, ok := strings.CutPrefix(entry, "*."); ok {
		return strings.HasSuffix(host, "."+s)
	}
	if a, err := netip.ParseAddr(entry); err == nil {
		return canonicalAddr(a).String() == host
	}
	return entry == host
}

// NormalizeHostEntry returns the form of an AllowedHosts entry that
// CheckURL compares: an IP literal as given, else the name converted by
// NormalizeHost, keeping a "*." prefix ("*.Bücher.example" is
// "*.xn--bcher-kva.example"). Entries are compared with the URL's host as
// ASCII, A-label to A-label: a look-alike name (Cyrillic "а" for Latin
// "a") converts to another A-label and never matches the entry it
// imitates.
func NormalizeHostEntry(e string) (string, error) {
	if _, err := netip.ParseAddr(e); err == nil {
		return e, nil
	}
	h, wild := strings.CutPrefix(e, "*.")
	n, err := NormalizeHost(h)
	if err != nil {
		return "", errors.New("'" + e + "' is not a host name: " + err.Error())
	}
	if numericLabel(n[strings.LastIndexByte(n, '.')+1:]) {
		return "", errors.New("'" + e + "' is not a host name (write an IP literal in its usual form)")
	}
	if wild {
		n = "*." + n
	}
	return n, nil
}

// ValidHostEntry checks an AllowedHosts entry as registrations did before
// Config.IDNHosts: an IP literal, or a lower case ASCII host name,
// optionally prefixed "*.".
func ValidHostEntry(e string) error {
	if _, err := netip.ParseAddr(e); err == nil {
		return nil
	}
	h := strings.TrimPrefix(e, "*.")
	if h == "" || len(h) > 253 {
		return errors.New("'" + e + "' is not a host name")
	}
	for _, l := range strings.Split(h, ".") {
		if !validLabel(l) {
			return errors.New("'" + e + "' is not a lower-case ASCII host name")
		}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}
