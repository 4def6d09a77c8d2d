package httpapi

import (
	"net/http"

	"github.com/agentgate/agentgate/handlers/command"
)

// Principal-scoped writes (issue 16): a principal's tool registry, its
// path and egress policy and its API keys. Config.PrincipalWriteRateLimit
// bounds the registry, the policy, key rotation and key revocation per
// API key before the command is built. Issuing a key (POST
// /principals/{id}/keys) is left out of it: the admin key provisions
// every tenant with it, a key per principal at once.

// principalRoutes registers the principal-scoped endpoints.
func (a *api) principalRoutes() {
	limited := writeOptions{admit: a.principalAdmit}
	a.handle("PUT /principals/{id}/tools", a.writeWith(command.PutToolRegistry, principalPath, limited))
	a.handle("PUT /principals/{id}/permissions", a.writeWith(command.PutPrincipalPermissions, principalPath, limited))
	a.handle("POST /principals/{id}/keys", a.write(command.IssuePrincipalKey, principalPath))
	a.handle("POST /principals/{id}/keys/{key_id}/rotate", a.writeWith(command.IssuePrincipalKey, principalKeyPath, limited))
	a.handle("DELETE /principals/{id}/keys/{key_id}", a.writeWith(command.RevokePrincipalKey, principalKeyPath, limited))
}

// principalAdmit applies Config.PrincipalWriteRateLimit to the API key's
// principal: over it, 429 with Retry-After, nothing recorded.
func (a *api) principalAdmit(w http.ResponseWriter, c *call) *apiError {
	return a.admitCredential(a.principalLimiter, w, c)
}
