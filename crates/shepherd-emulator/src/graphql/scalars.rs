//! GitHub's custom string scalars (`URI`, `DateTime`, `GitObjectID`), so that
//! field types match GitHub's schema.

use async_graphql::{InputValueError, InputValueResult, Scalar, ScalarType, Value};

macro_rules! string_scalar {
    ($ty:ident, $name:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub(crate) struct $ty(pub(crate) String);

        #[Scalar(name = $name)]
        impl ScalarType for $ty {
            fn parse(value: Value) -> InputValueResult<Self> {
                match value {
                    Value::String(s) => Ok($ty(s)),
                    other => Err(InputValueError::expected_type(other)),
                }
            }

            fn to_value(&self) -> Value {
                Value::String(self.0.clone())
            }
        }
    };
}

string_scalar!(Uri, "URI", "An RFC 3986 URI (GitHub's `URI` scalar).");
string_scalar!(
    DateTime,
    "DateTime",
    "An ISO 8601 timestamp (GitHub's `DateTime` scalar)."
);
string_scalar!(
    GitObjectId,
    "GitObjectID",
    "A git object id (GitHub's `GitObjectID` scalar)."
);
