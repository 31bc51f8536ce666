/**
 * Auto-configuration of budgets of model tokens for Spring AI's {@code ChatClient}.
 */
@NullMarked
package io.github.ratelimit.ai.autoconfigure;

import org.jspecify.annotations.NullMarked;
