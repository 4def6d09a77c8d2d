// Package guard holds the pure detectors of the agent gate's file, network
// and PII checks (QWED-Agent spec v1.1 §2.2 "File operations: security
// check", "Network requests: policy check", §5.2 no_pii_leakage, QWED
// protocol v1.0 §8 QWED-SEC-003).
//
// Everything here is lexical: a function of its arguments, reading no
// file, no clock, no DNS and no map order, so the domain can call it from
// Decide and a replay re-decides byte for byte.
//
//   - Paths (path.go) are normalised lexically (repeated slashes, ".",
//     ".." resolved; NUL and control bytes, backslashes, percent-encoded
//     bytes and strings that Unicode compatibility normalisation would
//     change are refused, never guessed). Symbolic links cannot be
//     resolved by a pure decider: a link inside an allowed root that points
//     outside it is the executor's to refuse (open with O_NOFOLLOW, or
//     resolve and re-check); the gate says what the path names, not what
//     the file system will make of it.
//   - URLs (network.go) are parsed strictly; IPv4 literals in every form
//     inet_aton accepts (decimal, octal, hexadecimal, one to four parts),
//     IPv4-mapped and -embedding IPv6 and trailing dots are normalised
//     before the host is classified; host names are mapped and validated
//     as UTS #46 and IDNA2008 say and compared as A-labels (idn.go), so a
//     fullwidth or ideographic-dot spelling is read as what it maps to and
//     a look-alike never matches the name it imitates; userinfo and
//     anything ambiguous are refused. Names are never resolved: a public
//     name that resolves to a private address (DNS rebinding) is out of a
//     pure decider's reach, and is covered at the dial, as the business
//     adapter's network policy does (handlers/adapter, NetworkPolicy).
//   - PII (pii.go) is found by deterministic scanners with checksums
//     where the format has one (Luhn, IBAN mod 97, US SSN area rules).
//
// The gate's Config.StrictGuards (docs/ARCHITECTURE.md, "Second review of
// issue 16: the guards") selects the reviewed behaviour, kept apart so a
// log written before re-decides as recorded: FilePolicy.FoldCase,
// EgressPolicy.Strict and ScanStrict/ScanJSONStrict; Scan, ScanJSON and
// the zero policies behave as they did.
package guard
