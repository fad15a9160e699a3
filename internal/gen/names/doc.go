// Package names is the one place acemq-gen makes Go identifiers: the
// model derives every manifest name (messages, queues, policies,
// publishers, handler methods) and the schema stage every type, field and
// enum constant name through it, and the emitters take the names they are
// given. It plays the part of protobuf-go's internal/strs.
//
// A name is split into words at every rune that is neither a letter nor a
// digit and at each lower-to-upper change of case (orderId → order Id,
// HTMLParser → HTML Parser); each word gets an upper-case first rune, and a
// word that is one of the Go initialisms (staticcheck's list: ID, URL,
// HTTP, JSON, UUID, API...) is written all in capitals: order_id gives
// OrderID, html_url HTMLURL. A manifest's names: section switches the list
// off (initialisms: false) or adds a team's own (add: [SKU]).
package names
