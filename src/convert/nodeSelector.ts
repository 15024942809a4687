// The DeschedulerPolicy's nodeSelector is a selector string (`pool=a,zone in (x, y),!spot`, the syntax of
// `kubectl get -l`); a RebalancePolicy's is a metav1.LabelSelector. Equality terms become matchLabels, the rest
// matchExpressions; a string that is not a selector is reported at the field (the descheduler refuses it too).
import type { Obj } from '../model/rawJson.js';

/** The terms of a selector string, split at the commas outside parentheses. */
function terms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(text.slice(start).trim());
  return out.filter((t) => t !== '');
}

const SET = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/;
const KEY = /^!?([^=!\s(),]+)$/;

/** The LabelSelector a selector string means, or a problem naming the term that is not one. */
export function parseNodeSelector(text: string): { selector: Obj } | { problem: string } {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: Obj[] = [];
  for (const term of terms(text)) {
    const set = SET.exec(term);
    if (set !== null) {
      const values = set[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      matchExpressions.push({ key: set[1], operator: set[2] === 'in' ? 'In' : 'NotIn', values });
      continue;
    }
    const eq = EQUALITY.exec(term);
    if (eq !== null) {
      const [, key, op, value] = eq;
      if (op === '!=') matchExpressions.push({ key, operator: 'NotIn', values: [value] });
      else if (key! in matchLabels && matchLabels[key!] !== value)
        matchExpressions.push({ key, operator: 'In', values: [value] });
      else matchLabels[key!] = value!;
      continue;
    }
    const key = KEY.exec(term);
    if (key !== null) {
      matchExpressions.push({ key: key[1], operator: term.startsWith('!') ? 'DoesNotExist' : 'Exists' });
      continue;
    }
    return {
      problem: `${JSON.stringify(term)} is not a label selector term (key=value, key!=value, key in (a,b), key, !key)`,
    };
  }
  return {
    selector: {
      ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
      ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
    },
  };
}
