package capread_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dagent-dev/dagent/internal/capread"
)

func ExampleRead() {
	_, err := capread.Read(strings.NewReader(`{"tasks": []}`), capread.Stdin, "plan", 8)
	var tl *capread.TooLargeError
	fmt.Println(errors.As(err, &tl), err)
	// Output: true read plan: standard input holds more than 8 bytes, the limit
}
