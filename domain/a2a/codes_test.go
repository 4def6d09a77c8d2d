package a2a_test

import (
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// The codes package a2a writes as plain strings are the catalogue's.
func TestCodesAreTheCatalogues(t *testing.T) {
	for got, want := range map[string]domain.Code{
		a2a.CodeInvalidRequest:     domain.CodeInvalidRequest,
		a2a.CodeMissingField:       domain.CodeMissingField,
		a2a.CodeTooLong:            domain.CodeTooLong,
		a2a.CodeUnsupportedType:    domain.CodeUnsupportedType,
		a2a.CodeFinanceMismatch:    domain.CodeA2AFinance,
		a2a.CodeLogicContradiction: domain.CodeA2ALogic,
		a2a.CodeDangerousCode:      domain.CodeA2ACode,
		a2a.CodeTrustBlocked:       domain.CodeA2ATrustBlocked,
		a2a.CodeRateLimited:        domain.CodeA2ARateLimited,
		a2a.CodeEngineError:        domain.CodeA2AEngineError,
	} {
		if got != string(want) || !want.Known() {
			t.Errorf("a2a code %s is not the catalogue's %s", got, want)
		}
	}
}
