//! The front end's error: a span of the user's source and a sentence saying what is wrong and
//! what to write instead.

use proc_macro2::Span;
use quote::ToTokens;
use std::fmt;

/// A construct outside the synthesizable subset, or a program the checker cannot type.
#[derive(Debug, Clone)]
pub struct Error {
    /// Where it starts (the first token of the offending code).
    pub start: Span,
    /// Where it ends (the last token), so an editor underlines the whole construct.
    pub end: Span,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl Error {
    /// An error over the tokens of `node`.
    pub fn spanned(node: &dyn ToTokens, message: impl Into<String>) -> Error {
        let mut tokens = node.to_token_stream().into_iter();
        let start = tokens.next().map_or_else(Span::call_site, |t| t.span());
        let end = tokens.last().map_or(start, |t| t.span());
        Error { start, end, message: message.into() }
    }

    /// An error at one span.
    pub fn at(span: Span, message: impl Into<String>) -> Error {
        Error { start: span, end: span, message: message.into() }
    }

    /// Line (1-based) and column (0-based) of the start, when the source was parsed with
    /// locations (outside a proc macro, or on a compiler that reports them).
    pub fn line_column(&self) -> (usize, usize) {
        let lc = self.start.start();
        (lc.line, lc.column)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column) = self.line_column();
        write!(f, "{line}:{}: {}", column + 1, self.message)
    }
}

impl std::error::Error for Error {}
