package schemas

// OpenAPIFile is the OpenAPI 3.1 document of the HTTP API, at the root of
// Files(): generated (handlers/httpapi's TestOpenAPIDocument writes it
// with -update) from the operations table and this package's schemas,
// which it bundles into its components. It is no JSON Schema of its own,
// so Get does not know it.
const OpenAPIFile = "openapi.v1.json"

// OpenAPI returns the OpenAPI document's bytes (GET /openapi.json serves
// them). The result is shared: the caller must not modify it.
func OpenAPI() []byte { return openAPI }

// openAPI is read once: the file is embedded, so reading it can only
// fail on a broken build, which the document's tests catch.
var openAPI = func() []byte {
	b, err := files.ReadFile(OpenAPIFile)
	if err != nil {
		return nil
	}
	return b
}()
