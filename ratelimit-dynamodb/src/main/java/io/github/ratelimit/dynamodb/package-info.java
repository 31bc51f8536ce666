/**
 * The DynamoDB store: the seed's atomic counter ({@code UpdateItem} with {@code ADD}, made conditional so that a
 * rejected request takes nothing), windows in the key, TTL only as a janitor, time from the application clock, no SDK
 * retries for decisions.
 */
@NullMarked
package io.github.ratelimit.dynamodb;

import org.jspecify.annotations.NullMarked;
