// The code editor: CodeMirror 6 with Python, Ctrl/Cmd+Enter to run the tests.
import { basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { HighlightStyle, indentUnit, syntaxHighlighting } from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { EditorSelection, EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";

const BOM = "\ufeff";

// Colours from the stylesheet, so both themes keep 4.5:1 against the editor's background.
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.definitionKeyword, tags.moduleKeyword], color: "var(--syn-keyword)" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--syn-string)" },
  { tag: [tags.number, tags.bool, tags.null], color: "var(--syn-number)" },
  { tag: tags.comment, color: "var(--syn-comment)", fontStyle: "italic" },
  { tag: [tags.function(tags.definition(tags.variableName)), tags.definition(tags.className)], color: "var(--syn-def)" },
]);

// A byte order mark, pasted or set, would make every test fail on a character nobody can see.
const dropBoms = EditorState.transactionFilter.of((tr) => {
  if (!tr.docChanged) return tr;
  const text = tr.newDoc.toString();
  if (!text.includes(BOM)) return tr;
  const changes = [];
  for (let i = text.indexOf(BOM); i >= 0; i = text.indexOf(BOM, i + 1)) changes.push({ from: i, to: i + 1 });
  return [tr, { changes, sequential: true }];
});

export function createEditor(parent, { doc, onChange, onRun, describedBy }) {
  const view = new EditorView({
    doc: doc.replaceAll(BOM, ""),
    parent,
    extensions: [
      dropBoms,
      // Long lines wrap and the editor grows with its code: no scrolling region of its own,
      // which a keyboard could not reach, and nothing to scroll sideways on a phone.
      EditorView.lineWrapping,
      syntaxHighlighting(highlight),
      basicSetup,
      python(),
      indentUnit.of("    "),
      keymap.of([indentWithTab]),
      Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (onRun(), true) }])),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange(update.state.doc.toString());
      }),
      EditorView.contentAttributes.of({
        "aria-label": "your solution, submission.py",
        ...(describedBy ? { "aria-describedby": describedBy } : {}),
      }),
    ],
  });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode: (code) =>
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: code },
        selection: EditorSelection.cursor(0),
        scrollIntoView: true,
      }),
    goToLine: (n) => {
      const line = view.state.doc.line(Math.max(1, Math.min(n, view.state.doc.lines)));
      view.dispatch({ selection: EditorSelection.cursor(line.from), scrollIntoView: true });
      view.focus();
    },
  };
}
