"""The model-call path: the run scope a call is made in, the chat model bound per kind of
request, the call itself (watch, retry, stop), token estimates and the context window."""
