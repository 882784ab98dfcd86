// Retry schedules (--notify-schedule / NOTIFY_SCHEDULE): the wait after the 1st, 2nd, ... failed
// attempt in a row, in seconds of the sandbox clock. After the last wait's attempt fails, it gives up.
import type { NotifySchedule } from "../config/config.js";

export const SCHEDULES: Record<NotifySchedule, readonly number[]> = {
  fast: [1, 2, 4, 8, 16],
  realistic: [60, 300, 900, 3_600, 21_600, 86_400],
};
