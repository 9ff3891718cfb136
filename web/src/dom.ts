// A few lines of DOM building instead of a UI framework (the toolchain stays TypeScript + Vite).
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

/** A message line (role=status or role=alert for errors) that a page fills in. */
export function messageLine(): { element: HTMLParagraphElement; say(text: string, error?: boolean): void } {
  const element = h("p", { class: "message", "data-testid": "message", "aria-live": "polite" });
  return {
    element,
    say(text: string, error = false) {
      element.textContent = text;
      element.setAttribute("role", error ? "alert" : "status");
      element.classList.toggle("error", error);
    },
  };
}
