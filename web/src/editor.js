// The code editor: CodeMirror 6 with Python, Ctrl/Cmd+Enter to run the tests.
import { basicSetup } from "codemirror";
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { EditorSelection, Prec } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";

export function createEditor(parent, { doc, onChange, onRun }) {
  const view = new EditorView({
    doc,
    parent,
    extensions: [
      basicSetup,
      python(),
      indentUnit.of("    "),
      keymap.of([indentWithTab]),
      Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (onRun(), true) }])),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange(update.state.doc.toString());
      }),
      EditorView.contentAttributes.of({ "aria-label": "your solution, submission.py" }),
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
