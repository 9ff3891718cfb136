"""Bad evaluator input: a field name and a message, reported as INVALID_ARGUMENT."""


class BadRequest(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
