//! The expansion of `#[agent]`: read the YAML, find the runtime crate, and report every problem as a
//! compile error at the attribute's string literal.

use std::path::{Path, PathBuf};

use pi_codegen::SpecError;
use pi_codegen::lower::LowerContext;
use pi_codegen::lower::rust_tools::agent_tokens;
use proc_macro_crate::FoundCrate;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;

/// Overrides `CARGO_MANIFEST_DIR` as the base of the YAML path. Only for the macro's own trybuild tests,
/// whose test crates live under target/ while their YAML files live in this crate.
const MANIFEST_DIR_OVERRIDE: &str = "PI_MACROS_MANIFEST_DIR";

const USAGE: &str = "expected the agent file, relative to the crate's Cargo.toml: #[agent(\"agent.yaml\")]";

/// `attr` is what the parentheses hold, `item` the struct. Never panics: every problem becomes
/// `compile_error!`, emitted next to the unchanged item so later errors do not pile up.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    match try_expand(attr, item.clone()) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#item #error)
        }
    }
}

fn try_expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream, syn::Error> {
    let strukt: syn::ItemStruct = syn::parse2(item.clone()).map_err(|error| {
        syn::Error::new(error.span(), "#[agent] goes on a struct: #[agent(\"agent.yaml\")] struct MyAgent;")
    })?;
    let literal = parse_path_literal(attr)?;
    if !strukt.generics.params.is_empty() {
        return Err(syn::Error::new(strukt.generics.span(), "#[agent] structs cannot have generic parameters"));
    }
    let base = manifest_dir().ok_or_else(|| syn::Error::new(literal.span(), "CARGO_MANIFEST_DIR is not set"))?;
    let path = base.join(literal.value());
    let at_literal = |message: String| syn::Error::new(literal.span(), message);
    let spec = pi_codegen::load_spec(&path).map_err(|error| at_literal(describe(&error, &base)))?;
    let mut ctx = LowerContext::new(&path);
    ctx.runtime = runtime_path().map_err(at_literal)?;
    let generated = agent_tokens(&spec, &ctx, &strukt.ident).map_err(|error| at_literal(describe(&error, &base)))?;
    Ok(quote! {
        #item
        #generated
    })
}

/// The single string literal in `#[agent("...")]`.
fn parse_path_literal(attr: TokenStream) -> Result<syn::LitStr, syn::Error> {
    if attr.is_empty() {
        return Err(syn::Error::new(Span::call_site(), USAGE));
    }
    let span = attr.span();
    let literal: syn::LitStr = syn::parse2(attr).map_err(|_| syn::Error::new(span, USAGE))?;
    if literal.value().is_empty() {
        return Err(syn::Error::new(literal.span(), USAGE));
    }
    Ok(literal)
}

fn manifest_dir() -> Option<PathBuf> {
    std::env::var_os(MANIFEST_DIR_OVERRIDE).or_else(|| std::env::var_os("CARGO_MANIFEST_DIR")).map(PathBuf::from)
}

/// The path generated code names the runtime by: `::pi_runtime`, `::<renamed>`, or `crate` inside the
/// runtime itself.
fn runtime_path() -> Result<TokenStream, String> {
    match proc_macro_crate::crate_name("pi-runtime") {
        Ok(FoundCrate::Itself) => Ok(quote!(crate)),
        Ok(FoundCrate::Name(name)) => match syn::parse_str::<syn::Ident>(&name) {
            Ok(ident) => Ok(quote!(::#ident)),
            Err(_) => Err(format!("#[agent]: the runtime's dependency name `{name}` is not an identifier")),
        },
        Err(error) => Err(format!(
            "#[agent] needs the pi-runtime crate: add `pi-runtime` to [dependencies] in Cargo.toml ({error})"
        )),
    }
}

/// The error as the user should read it: one `file:line:col: message` per problem, paths relative to the
/// crate's directory (as the attribute writes them).
fn describe(error: &SpecError, base: &Path) -> String {
    let shown = |path: &Path| path.strip_prefix(base).unwrap_or(path).display().to_string();
    match error {
        SpecError::Invalid(problems) => problems
            .iter()
            .map(|problem| format!("{}:{}:{}: {}", shown(&problem.path), problem.line, problem.column, problem.message))
            .collect::<Vec<_>>()
            .join("\n"),
        SpecError::Read { path, source } => format!("cannot read {}: {source}", shown(path)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(attr: TokenStream, item: TokenStream) -> String {
        expand(attr, item).to_string()
    }

    #[test]
    fn bad_arguments_are_a_compile_error_not_a_panic() {
        for attr in [quote!(), quote!(notes), quote!("a.yaml", "b.yaml"), quote!(42), quote!("")] {
            let text = expanded(
                attr.clone(),
                quote!(
                    struct Notes;
                ),
            );
            assert!(text.starts_with("struct Notes ;"), "the struct stays: {text}");
            assert!(text.contains("compile_error"), "{attr}: {text}");
            assert!(text.contains("expected the agent file"), "{attr}: {text}");
        }
    }

    #[test]
    fn only_plain_structs_are_accepted() {
        let text = expanded(
            quote!("notes.yaml"),
            quote!(
                fn notes() {}
            ),
        );
        assert!(text.contains("#[agent] goes on a struct"), "{text}");
        let text = expanded(
            quote!("notes.yaml"),
            quote!(
                struct Notes<T>(T);
            ),
        );
        assert!(text.contains("cannot have generic parameters"), "{text}");
    }

    #[test]
    fn errors_show_paths_relative_to_the_crate() {
        let base = Path::new("/crate");
        let error = SpecError::Invalid(vec![
            pi_codegen::Located::new(Path::new("/crate/agents/a.yaml"), 3, 7, "name: bad"),
            pi_codegen::Located::new(Path::new("/elsewhere/b.md"), 1, 1, "template: bad"),
        ]);
        assert_eq!(describe(&error, base), "agents/a.yaml:3:7: name: bad\n/elsewhere/b.md:1:1: template: bad");
        let missing = SpecError::Read {
            path: PathBuf::from("/crate/gone.yaml"),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(describe(&missing, base).starts_with("cannot read gone.yaml: "), "{}", describe(&missing, base));
    }
}
