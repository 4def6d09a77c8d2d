// Package fact is the fact engine of the QWED protocol v1.0 (§4.1, §5.2.4, engine id
// "fact"): it checks a claim against the text given in params.context,
// deterministically and without world knowledge. The claim is VERIFIED
// only when one context sentence supports it; FAILED when a context
// sentence about the same entities and predicate contradicts it, with the
// reason and the sentence; otherwise UNSUPPORTED ("the context does not
// settle it"). It never verifies on word overlap alone.
//
// # Reading text
//
// Sentences end at . ! ? followed by a space and a capital letter, digit or
// quote (not after abbreviations such as Mr., Dr., U.S., e.g., Jan. or an
// initial, and not inside numbers such as 2.5), and at blank lines. In each
// sentence the engine reads, in order:
//
//   - dates: 2024-03-05, "March 5, 2024", "5 March 2024", "March 2024",
//     "March 5" (month names capitalised; abbreviations such as Mar. too);
//   - numbers: 1,234.5 exactly, with a currency symbol before ($ € £ ¥), a
//     percent sign or "percent" / "per cent" after, a scale word (thousand,
//     million, billion, trillion) and a unit: a known unit word (metres, km,
//     kg, dollars, euros, ...) or the noun after the number ("2 million
//     residents" has the unit "resident"); a qualifier before it (about,
//     over, nearly, more than, at least, ...) makes it approximate;
//   - entities: runs of capitalised words, joined by of/de/van/von/...
//     ("Bank of America"), without a leading "the"; a capitalised
//     sentence-initial word is an entity only if it is no function word and
//     the input never writes it in lower case;
//   - negation cues: not, no, never, n't, neither, nor, none, nobody,
//     nothing, nowhere, cannot;
//   - hedge cues: may, might, could, possibly, perhaps, reportedly,
//     allegedly, probably, likely, if, whether, unless, and attribution
//     (said, says, according, stated): "X said the museum is closed" does
//     not assert that the museum is closed;
//   - predicate words: the remaining content words, reduced to a crude
//     lemma (capitals -> capital, located -> locat, built -> build).
//
// A context sentence that begins with a pronoun (It, Its, They, Their, He,
// His, She, Her, This, These, There) also names the first entity of the
// sentence before it (its subject): "France is a country in Europe. Its
// capital city is Paris." names France and Paris in the second sentence.
// The year of a date also counts as a number of the sentence.
//
// # Deciding
//
// Each sentence of the claim is judged on its own; the claim is FAILED if
// any part is contradicted, VERIFIED if every part is supported, and
// otherwise UNSUPPORTED. A claim sentence must name at least one entity,
// number or date, and state a predicate (content words; when it has none,
// its prepositions such as "in" are the predicate; a claim with a number
// or date may have none): otherwise it is UNSUPPORTED.
//
// A context sentence supports the claim when it names every claim entity
// (the claim's words as a contiguous part of a sentence entity: "Obama"
// matches "Barack Obama"), every claim number (equal value, the same
// qualifier, and the same unit when the claim gives one), every claim
// date (equal in every field the claim states), every predicate lemma, and
// has the same negation and hedging, and is no question.
//
// A plain (unhedged, non-question) context sentence with every claim
// entity and predicate lemma contradicts the claim when it states all the
// claim's numbers and dates with the opposite negation, or when both are
// affirmative and, for a claim number (date) it does not state, it states
// an exact number with the same unit (a date with the same fields) of a
// different value. When the context both supports and contradicts a claim
// the claim is UNSUPPORTED, citing both sentences.
//
// # Result
//
// is_valid, the verdict, the evidence sentence with its index, expected
// and actual (what the context says and what the claim says where they
// disagree, QWED protocol v1.0 §6.3.2), one part per claim sentence with what was
// read from it, and a message with the reason.
package fact
