// One line of `hearth doctor`: what was checked, whether it is fine, and how to fix it.
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** With ok: false, how to fix it; with ok: true, how to remove a risk (printed with "!"). */
  fix?: string;
}
