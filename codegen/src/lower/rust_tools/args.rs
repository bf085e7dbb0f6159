//! The argument struct of a `handler: rust` tool, derived from the top level of its JSON Schema.

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use serde_json::Value;

use super::names::{snake_ident, unraw};
use crate::spec::CustomToolSpec;

/// `pub struct <ident> { ... }` deserializing the tool's arguments. `runtime` names the runtime crate;
/// serde and serde_json are reached through its hidden `macro_support` module.
pub fn args_struct(runtime: &TokenStream, tool: &CustomToolSpec, ident: &Ident) -> TokenStream {
    let schema = tool.parameters_schema();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = serde_json::Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let mut taken: Vec<String> = Vec::new();
    let fields = properties.iter().map(|(name, property)| {
        let field = unique(snake_ident(name), &mut taken);
        let (ty, nullable) = rust_type(runtime, property);
        let optional = nullable || !required.contains(&name.as_str());
        let ty = if optional { quote!(::core::option::Option<#ty>) } else { ty };
        let mut serde_args = Vec::new();
        if unraw(&field) != *name {
            serde_args.push(quote!(rename = #name));
        }
        if optional {
            serde_args.push(quote!(default));
        }
        let serde_attr = (!serde_args.is_empty()).then(|| quote!(#[serde(#(#serde_args),*)]));
        let doc = property.get("description").and_then(Value::as_str).map(|text| {
            let text = format!(" {text}");
            quote!(#[doc = #text])
        });
        quote! {
            #doc
            #serde_attr
            pub #field: #ty
        }
    });
    let serde_crate = format!("{}::macro_support::serde", compact(runtime));
    let doc = format!(" Arguments of the `{}` tool, as its parameter schema in the YAML describes them.", tool.name);
    quote! {
        #[doc = #doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, #runtime::macro_support::serde::Deserialize)]
        #[serde(crate = #serde_crate)]
        pub struct #ident {
            #(#fields,)*
        }
    }
}

/// The path's text without the spaces `TokenStream::to_string` puts between tokens: `::pi_runtime`.
pub fn compact(path: &TokenStream) -> String {
    path.to_string().chars().filter(|c| !c.is_whitespace()).collect()
}

/// `ident`, or `ident_2`, `ident_3`, ... when an earlier field already has that name.
fn unique(ident: Ident, taken: &mut Vec<String>) -> Ident {
    let base = ident.to_string();
    let mut candidate = ident;
    let mut counter = 1;
    while taken.contains(&candidate.to_string()) {
        counter += 1;
        candidate = snake_ident(&format!("{}_{counter}", unraw_text(&base)));
    }
    taken.push(candidate.to_string());
    candidate
}

fn unraw_text(text: &str) -> &str {
    text.strip_prefix("r#").unwrap_or(text)
}

/// The Rust type of a property schema, and whether the schema allows `null`.
fn rust_type(runtime: &TokenStream, property: &Value) -> (TokenStream, bool) {
    let value = quote!(#runtime::macro_support::serde_json::Value);
    match property.get("type") {
        Some(Value::String(name)) => (named_type(runtime, name, property), false),
        Some(Value::Array(names)) => {
            let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
            let nullable = names.contains(&"null");
            let others: Vec<&str> = names.into_iter().filter(|name| *name != "null").collect();
            match others.as_slice() {
                [single] => (named_type(runtime, single, property), nullable),
                _ => (value, false),
            }
        }
        _ => {
            let all_strings = property
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|values| !values.is_empty() && values.iter().all(Value::is_string));
            if all_strings { (quote!(::std::string::String), false) } else { (value, false) }
        }
    }
}

fn named_type(runtime: &TokenStream, name: &str, property: &Value) -> TokenStream {
    match name {
        "string" => quote!(::std::string::String),
        "integer" => quote!(i64),
        "number" => quote!(f64),
        "boolean" => quote!(bool),
        "array" => {
            let item = match property.get("items") {
                Some(items) if items.is_object() => {
                    let (ty, nullable) = rust_type(runtime, items);
                    if nullable { quote!(::core::option::Option<#ty>) } else { ty }
                }
                _ => quote!(#runtime::macro_support::serde_json::Value),
            };
            quote!(::std::vec::Vec<#item>)
        }
        _ => quote!(#runtime::macro_support::serde_json::Value),
    }
}
