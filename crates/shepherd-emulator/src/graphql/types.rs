//! The emulator's schema as data: each type's fields, their types and
//! arguments, read once from the schema's own SDL. Used where GitHub's
//! behaviour needs type knowledge that async-graphql does not expose: null
//! propagation for partial results and GitHub-style validation errors.

use std::collections::HashMap;
use std::sync::LazyLock;

use async_graphql::parser::types::{BaseType, Type, TypeKind, TypeSystemDefinition};

use super::schema;

/// A field of an object or interface.
pub(crate) struct FieldDef {
    pub(crate) ty: Type,
    pub(crate) args: Vec<String>,
}

/// An output type: its fields (none for unions, scalars and enums).
#[derive(Default)]
pub(crate) struct TypeDef {
    pub(crate) fields: HashMap<String, FieldDef>,
}

/// Every type of the schema, by name.
pub(crate) struct TypeIndex {
    types: HashMap<String, TypeDef>,
}

/// The field every type has.
static TYPENAME: LazyLock<FieldDef> = LazyLock::new(|| FieldDef {
    ty: Type {
        base: BaseType::Named(async_graphql::Name::new("String")),
        nullable: false,
    },
    args: Vec::new(),
});

impl TypeIndex {
    fn from_sdl(sdl: &str) -> TypeIndex {
        let mut types = HashMap::new();
        // The SDL is async-graphql's own rendering of the schema; should it
        // ever fail to parse, the index is empty and callers fall back to
        // async-graphql's answers.
        let Ok(document) = async_graphql::parser::parse_schema(sdl) else {
            tracing::error!("cannot parse the emulator's own SDL");
            return TypeIndex { types };
        };
        for definition in document.definitions {
            let TypeSystemDefinition::Type(ty) = definition else {
                continue;
            };
            let ty = ty.node;
            let fields = match ty.kind {
                TypeKind::Object(object) => object.fields,
                TypeKind::Interface(interface) => interface.fields,
                _ => Vec::new(),
            };
            let fields = fields
                .into_iter()
                .map(|f| {
                    let f = f.node;
                    let args = f
                        .arguments
                        .iter()
                        .map(|a| a.node.name.node.to_string())
                        .collect();
                    (
                        f.name.node.to_string(),
                        FieldDef {
                            ty: f.ty.node,
                            args,
                        },
                    )
                })
                .collect();
            types.insert(ty.name.node.to_string(), TypeDef { fields });
        }
        TypeIndex { types }
    }

    /// The shared index of the emulator's schema.
    pub(crate) fn shared() -> &'static TypeIndex {
        static INDEX: LazyLock<TypeIndex> = LazyLock::new(|| TypeIndex::from_sdl(&schema::sdl()));
        &INDEX
    }

    /// Whether the schema has a type of this name.
    pub(crate) fn has_type(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }

    /// Field `field` of type `ty` (`__typename` on every type); `None` when
    /// the type has no such field.
    pub(crate) fn field(&self, ty: &str, field: &str) -> Option<&FieldDef> {
        if field == "__typename" {
            return Some(&TYPENAME);
        }
        self.types.get(ty)?.fields.get(field)
    }
}

/// The named type at the bottom of a (list) type.
pub(crate) fn named(ty: &Type) -> &str {
    match &ty.base {
        BaseType::Named(name) => name.as_str(),
        BaseType::List(inner) => named(inner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_fields_types_and_arguments() {
        let index = TypeIndex::shared();
        assert!(index.has_type("PullRequest"));
        let field = index.field("Query", "repository").unwrap();
        assert!(field.ty.nullable);
        assert_eq!(named(&field.ty), "Repository");
        assert!(field.args.contains(&"owner".to_owned()));
        let threads = index.field("PullRequest", "reviewThreads").unwrap();
        assert!(!threads.ty.nullable);
        assert!(index.field("User", "__typename").is_some());
        assert!(index.field("User", "nope").is_none());
    }
}
