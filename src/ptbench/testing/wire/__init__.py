"""One module per wire format: parse a request into a RequestView, render a Reply back."""
