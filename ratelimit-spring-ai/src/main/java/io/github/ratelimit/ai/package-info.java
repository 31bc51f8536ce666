/**
 * Budgets of model tokens for Spring AI's {@code ChatClient}: an advisor that reserves a call's estimated tokens with
 * the policy engine before the model is called, rejects the call early when the budget cannot cover them, and settles
 * the reservation to the tokens the response's usage says it cost.
 */
@NullMarked
package io.github.ratelimit.ai;

import org.jspecify.annotations.NullMarked;
