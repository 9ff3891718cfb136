// Sign up and log in (password accounts: the gateway's SignUp and Login).
import { describeError, gateway } from "../api.js";
import { h, messageLine } from "../dom.js";
import type { LoginResponse } from "../gen/cardroom/v1/gateway_pb.js";
import { session } from "../session.js";

// The gateway's player id rule (1-32 letters, digits, '_' or '-', starting with a letter or digit).
// A pattern attribute is anchored and compiled with the `v` flag: the '-' in a class is escaped.
const PLAYER_ID = "[A-Za-z0-9][A-Za-z0-9_\\-]{0,31}";

interface Form {
  title: string;
  submit: string;
  testid: string;
  other: { text: string; href: string };
  call(playerId: string, password: string): Promise<LoginResponse>;
  done(login: LoginResponse): string;
}

function authPage(root: HTMLElement, form: Form, go: (route: string) => void): void {
  const playerId = h("input", {
    name: "player_id", id: "player_id", required: "", pattern: PLAYER_ID, autocomplete: "username",
    maxlength: "32",
  });
  const password = h("input", {
    name: "password", id: "password", type: "password", required: "", minlength: "8", maxlength: "128",
    autocomplete: form.testid === "signup" ? "new-password" : "current-password",
  });
  const button = h("button", { type: "submit" }, form.submit);
  const message = messageLine();
  const element = h(
    "form",
    { class: "card", "data-testid": form.testid },
    h("h1", {}, form.title),
    h("label", { for: "player_id" }, "Player id"),
    playerId,
    h("label", { for: "password" }, "Password (8 to 128 characters)"),
    password,
    button,
    message.element,
    h("p", {}, h("a", { href: form.other.href }, form.other.text)),
  );
  element.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    message.say("…");
    form
      .call(playerId.value.trim(), password.value)
      .then((login) => {
        session.save(login);
        message.say(form.done(login));
        go("#/lobby");
      })
      .catch((error: unknown) => message.say(describeError(error), true))
      .finally(() => {
        button.disabled = false;
      });
  });
  root.replaceChildren(element);
  playerId.focus();
}

export function signUpPage(root: HTMLElement, go: (route: string) => void): void {
  authPage(
    root,
    {
      title: "Sign up",
      submit: "Create account",
      testid: "signup",
      other: { text: "Already have an account? Log in", href: "#/login" },
      call: (playerId, password) => gateway().signUp({ playerId, password }),
      done: (login) => (login.granted ? "Account created: play chips deposited." : "Account created."),
    },
    go,
  );
}

export function logInPage(root: HTMLElement, go: (route: string) => void): void {
  authPage(
    root,
    {
      title: "Log in",
      submit: "Log in",
      testid: "login",
      other: { text: "New here? Sign up", href: "#/signup" },
      call: (playerId, password) => gateway().login({ playerId, password }),
      done: () => "Logged in.",
    },
    go,
  );
}
