package strictjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// Shape is what Check expects of a value: the member names of an object
// (each with the shape of its value), or the shape of an array's elements
// or a map's values. The nil *Shape accepts any value (repeated names are
// still refused at every depth). Shapes are immutable once built and safe
// for concurrent use.
type Shape struct {
	// members maps each exact member name to the shape of its value.
	members map[string]*Shape
	// folded maps the folded form of each member name to the name.
	folded map[string]string
	// closed refuses members that are not in members.
	closed bool
	// elem is the shape of an array's elements, of a map's values, and of
	// the values of an open object's members that are not in members.
	elem *Shape
}

// Object returns the shape of an object with the given members (the
// shape of each value; nil accepts any value); closed refuses any other
// member, open accepts other members with any value.
func Object(members map[string]*Shape, closed bool) *Shape {
	s := &Shape{members: make(map[string]*Shape, len(members)), folded: make(map[string]string, len(members)), closed: closed}
	for name, m := range members {
		s.members[name] = m
		s.folded[foldString(name)] = name
	}
	return s
}

// Array returns the shape of an array whose elements have shape elem.
func Array(elem *Shape) *Shape { return &Shape{elem: elem} }

type shapeKey struct {
	t      reflect.Type
	closed bool
}

var shapes sync.Map // shapeKey -> *Shape

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// ShapeOf returns the shape encoding/json decodes t from: the JSON names
// of a struct's fields, embedded structs' fields promoted, by
// encoding/json's rules (a json tag's name, else the Go name; "-"
// skipped; of two fields with one name, the shallower, then the tagged
// one, wins; a tie hides both); an array's or slice's elements; a map's
// values. A type with its own UnmarshalJSON or UnmarshalText, and an
// interface, accept any value. closed makes every struct's shape closed
// (json.Decoder.DisallowUnknownFields); open struct shapes accept unknown
// members but not a known name in another case. The result is cached.
func ShapeOf(t reflect.Type, closed bool) *Shape {
	k := shapeKey{t, closed}
	if s, ok := shapes.Load(k); ok {
		return s.(*Shape)
	}
	b := builder{closed: closed, done: map[reflect.Type]*Shape{}}
	s := b.shape(t)
	v, _ := shapes.LoadOrStore(k, s)
	return v.(*Shape)
}

// builder builds the shapes of one ShapeOf call; done holds the shapes
// being built, so that a recursive type refers to itself.
type builder struct {
	closed bool
	done   map[reflect.Type]*Shape
}

func (b *builder) shape(t reflect.Type) *Shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	if s, ok := b.done[t]; ok {
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &Shape{members: map[string]*Shape{}, folded: map[string]string{}, closed: b.closed}
		b.done[t] = s
		for _, f := range jsonFields(t) {
			s.members[f.name] = b.shape(f.typ)
			s.folded[foldString(f.name)] = f.name
		}
		return s
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte is a base64 string
		}
		return &Shape{elem: b.shape(t.Elem())}
	case reflect.Array:
		return &Shape{elem: b.shape(t.Elem())}
	case reflect.Map:
		return &Shape{elem: b.shape(t.Elem())}
	}
	return nil
}

// field is one JSON member of a struct.
type field struct {
	name   string
	typ    reflect.Type
	depth  int
	tagged bool
}

// jsonFields lists the JSON members of struct type t as encoding/json
// names them (see ShapeOf).
func jsonFields(t reflect.Type) []field {
	var all []field
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, depth+1, seen)
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			all = append(all, field{name: name, typ: sf.Type, depth: depth, tagged: tagged})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	// Of the fields with one name the shallowest wins, then the only
	// tagged one; any other tie hides them all.
	byName := map[string][]field{}
	var order []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	out := make([]field, 0, len(order))
	for _, name := range order {
		if f, ok := dominant(byName[name]); ok {
			out = append(out, f)
		}
	}
	return out
}

func dominant(fs []field) (field, bool) {
	depth := fs[0].depth
	for _, f := range fs {
		depth = min(depth, f.depth)
	}
	var top []field
	for _, f := range fs {
		if f.depth == depth {
			top = append(top, f)
		}
	}
	if len(top) == 1 {
		return top[0], true
	}
	var tagged []field
	for _, f := range top {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return field{}, false
}
