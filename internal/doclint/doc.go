// Package doclint checks the module's own documentation: its tests fail
// when a comment or a markdown page refers a reader to something they
// cannot look up. It has no API.
package doclint
