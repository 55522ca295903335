use url::Url;

use super::*;

fn texts(js: &str) -> Vec<(String, bool)> {
    script_urls(js)
        .into_iter()
        .map(|u| (u.text, u.module_relative))
        .collect()
}

fn taken(js: &str) -> Vec<String> {
    script_urls(js).into_iter().map(|u| u.text).collect()
}

#[test]
fn a_bundlers_output_names_its_chunks_images_and_worker() {
    // As Vite 8 writes a React app's entry (abridged).
    let js = r#"import{t as e}from"./vendor-9f8e.js";var m=`/assets/hero-CLDdwZDr.png`,
        h="/assets/react-CHdo91hT.svg",v=function(e){return`/`+e};
        const __vite__mapDeps=(i,m=__vite__mapDeps,d=(m.f||(m.f=["assets/Lazy-B573r3I8.js","assets/Lazy-Dz-hIYeB.css"])))=>i.map(i=>d[i]);
        ne=(0,l.lazy)(()=>te(()=>import(`./Lazy-B573r3I8.js`),__vite__mapDeps([0,1])));
        new Worker(new URL(`/assets/worker-BhORHZjI.js`,``+import.meta.url),{type:`module`});
        const icon=new URL("icon.png", import.meta.url).href;
        fetch(`https://react.dev/errors/`+n);e.setAttribute("xmlns","http://www.w3.org/2000/svg");
        export{a as b}from"../shared/c.mjs";export*from'/lib/d.js';import'./side-effect.js'"#;
    assert_eq!(
        texts(js),
        [
            ("./vendor-9f8e.js", true),
            ("/assets/hero-CLDdwZDr.png", false),
            ("/assets/react-CHdo91hT.svg", false),
            ("assets/Lazy-B573r3I8.js", false),
            ("assets/Lazy-Dz-hIYeB.css", false),
            ("./Lazy-B573r3I8.js", true),
            ("/assets/worker-BhORHZjI.js", true),
            ("icon.png", true),
            ("../shared/c.mjs", true),
            ("/lib/d.js", true),
            ("./side-effect.js", true),
        ]
        .map(|(t, m)| (t.to_string(), m))
    );
}

#[test]
fn comments_regular_expressions_and_substitutions_are_not_references() {
    let js = r#"
        // var a = "/img/in-line-comment.png";
        /* "/img/in-block-comment.png" */
        var re = /"\/img\/in-regex.png"/g, cls = /[/"]"\/img\/in-class.png"/;
        var half = width / 2, s = "/img/after-division.png";
        var t = `/img/${name}.png`, u = `${"/img/in-substitution.png"}`;
        var w = `a${`/img/${x}/nested.png`}b`, after = '/img/after-templates.png';
        if (x) return /"\/img\/after-return.png"/.test(y);
    "#;
    assert_eq!(
        taken(js),
        [
            "/img/after-division.png",
            "/img/in-substitution.png",
            "/img/after-templates.png"
        ]
    );
}

#[test]
fn only_paths_to_assets_are_taken_from_plain_strings() {
    let js = r#"["react", "index.js", "help.html", "/search/index.json", "data:image/png;base64,AAAA.png",
        "mailto:a@b.png", "javascript:x.js", "a b/c.png", "/a\u00a0b/c.png", "/a\u2028b.png", "/img/photo.JPG?v=2#x", "//cdn.example/lib.js",
        "https://cdn.example/font.woff2", "img/logo.svg", "/", "/img/", "/.png", "http://www.w3.org/2000/svg"]"#;
    assert_eq!(
        taken(js),
        [
            "/img/photo.JPG?v=2#x",
            "//cdn.example/lib.js",
            "https://cdn.example/font.woff2",
            "img/logo.svg"
        ]
    );
}

#[test]
fn module_specifiers_must_be_urls_and_workers_take_any_path() {
    let js = r#"import React from "react"; import "lodash/fp.js"; import x from "./x";
        import("@scope/pkg"); import(/* webpackChunk */ "./chunk-1.js");
        new Worker("worker.js"); importScripts('lib/a.js', "b.js"); obj.import("./y.js");
        new URL("data:text/plain,x", import.meta.url); new URL("pic.png", document.baseURI);"#;
    assert_eq!(
        texts(js),
        [
            ("./x", true),
            ("./chunk-1.js", true),
            ("worker.js", false),
            ("lib/a.js", false),
            ("./y.js", false),
        ]
        .map(|(t, m)| (t.to_string(), m))
    );
}

#[test]
fn escapes_are_decoded() {
    let js = r#"a = "\/assets\/a.png"; b = "\u002fassets/b.png"; c = '\x2fassets/c.png';
        d = "\u{2f}assets/d.png"; e = "/assets/\
e.png"; f = "/assets/new\nline.png";"#;
    assert_eq!(
        taken(js),
        [
            "/assets/a.png",
            "/assets/b.png",
            "/assets/c.png",
            "/assets/d.png",
            "/assets/e.png"
        ]
    );
}

#[test]
fn hostile_scripts_end_without_recursion_or_unbounded_output() {
    // A parser recurses once per bracket, operator or template; the lexer does not.
    let deep = "(".repeat(200_000) + "'/a/x.png'" + &")".repeat(200_000);
    assert_eq!(taken(&deep), ["/a/x.png"]);
    let bangs = "!".repeat(1_000_000) + "x";
    assert!(taken(&bangs).is_empty());
    let templates = "`${".repeat(100_000);
    assert!(taken(&templates).is_empty());
    // Regular expressions and strings that never end on their line are read ahead again and
    // again: bounded to a few readings of the script (these took seconds at 40,000 and grew
    // as the square).
    for unit in ["(/[", "\"\\", "=/\\"] {
        script_urls(&unit.repeat(400_000));
    }
    let unterminated = "\"/a/x.png\n'/b/y.png\n`/c/z.png";
    assert_eq!(taken(unterminated), Vec::<String>::new());
    let many: String = (0..5_000).map(|i| format!("'/i/{i}.png',")).collect();
    assert_eq!(taken(&many).len(), MAX_SCRIPT_URLS);
    let long = format!("'/{}.png'", "a".repeat(10_000));
    assert!(taken(&long).is_empty());
    // Cut inside characters of several bytes, escapes and comments at the very end.
    for js in [
        "'é\\", "`é\\", "/é\\", "/*é", "x/\\é", "'\\u{", "'\\x", "\"\\u12",
    ] {
        script_urls(js);
    }
}

#[test]
fn a_script_resolves_bundler_paths_against_the_base_above_its_directory() {
    let at = |script: &str, text: &str, module_relative: bool| {
        let url = ScriptUrl {
            text: text.to_string(),
            module_relative,
        };
        url.resolve_in_script(&Url::parse(script).unwrap())
            .map(|u| u.to_string())
    };
    let vite = "http://a.org/assets/index-1.js";
    assert_eq!(
        at(vite, "assets/Lazy.css", false).unwrap(),
        "http://a.org/assets/Lazy.css"
    );
    assert_eq!(
        at(vite, "./Lazy.js", true).unwrap(),
        "http://a.org/assets/Lazy.js"
    );
    assert_eq!(
        at(vite, "/icons.svg#x", false).unwrap(),
        "http://a.org/icons.svg"
    );
    assert_eq!(
        at(vite, "icon.png", true).unwrap(),
        "http://a.org/assets/icon.png"
    );
    let cra = "http://a.org/app/static/js/main.1.js";
    assert_eq!(
        at(cra, "static/media/logo.svg", false).unwrap(),
        "http://a.org/app/static/media/logo.svg"
    );
    // No directory of that name above the script: relative to a page it does not know, or
    // no URL (jQuery UI's AMD module names), so left.
    assert_eq!(at(cra, "img/a.png", false), None);
    let jquery_ui = "http://a.org/lib/exe/jquery.php";
    assert_eq!(at(jquery_ui, "ui/effects/effect-blind.js", false), None);
    // `new URL(…, import.meta.url)` is relative to the script itself.
    assert_eq!(
        at(cra, "w.js", true).unwrap(),
        "http://a.org/app/static/js/w.js"
    );
    assert_eq!(
        at(cra, "https://cdn.example/x.js", false).unwrap(),
        "https://cdn.example/x.js"
    );
}
