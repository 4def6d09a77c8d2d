package domain

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// TrustLevel is 0 (untrusted) to 3 (trusted), QWED-Agent spec v1.1 §8.1.
type TrustLevel int

// The trust levels.
const (
	TrustUntrusted  TrustLevel = 0
	TrustSupervised TrustLevel = 1
	TrustAutonomous TrustLevel = 2
	TrustTrusted    TrustLevel = 3
)

var trustNames = [...]string{"untrusted", "supervised", "autonomous", "trusted"}

// String returns the level's name.
func (t TrustLevel) String() string {
	if t >= 0 && int(t) < len(trustNames) {
		return trustNames[t]
	}
	return "invalid(" + strconv.Itoa(int(t)) + ")"
}

// ParseTrustLevel accepts 0-3 or a level name (case-insensitive).
func ParseTrustLevel(s string) (TrustLevel, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range trustNames {
		if s == n || s == strconv.Itoa(i) {
			return TrustLevel(i), nil
		}
	}
	return 0, fmt.Errorf("trust level %q: want 0-3 or untrusted/supervised/autonomous/trusted", s)
}

// UnmarshalJSON accepts a number 0-3 or a level name.
func (t *TrustLevel) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		s = string(b)
	}
	v, err := ParseTrustLevel(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// Risk is an action's risk level (QWED-Agent user guide, "Risk assessment").
type Risk string

// The risk levels, in increasing order.
const (
	RiskLow      Risk = "low"
	RiskMedium   Risk = "medium"
	RiskHigh     Risk = "high"
	RiskCritical Risk = "critical"
)

// Rank orders risks: low 0 … critical 3; an unknown risk ranks as critical
// (fail closed).
func (r Risk) Rank() int {
	switch r {
	case RiskLow:
		return 0
	case RiskMedium:
		return 1
	case RiskHigh:
		return 2
	}
	return 3
}

// ParseRisk accepts a risk name (case-insensitive).
func ParseRisk(s string) (Risk, error) {
	switch r := Risk(strings.ToLower(strings.TrimSpace(s))); r {
	case RiskLow, RiskMedium, RiskHigh, RiskCritical:
		return r, nil
	}
	return "", fmt.Errorf("risk level %q: want low, medium, high or critical", s)
}

// UnmarshalJSON accepts a risk name in any case.
func (r *Risk) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := ParseRisk(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}
