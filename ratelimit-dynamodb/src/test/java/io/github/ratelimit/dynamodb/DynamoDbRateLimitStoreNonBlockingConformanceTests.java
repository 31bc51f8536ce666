package io.github.ratelimit.dynamodb;

/**
 * The whole conformance suite against dynalite, through the store's non-blocking methods on the SDK's asynchronous
 * client.
 */
class DynamoDbRateLimitStoreNonBlockingConformanceTests extends DynamoDbRateLimitStoreConformanceTests {

	@Override
	protected boolean nonBlocking() {
		return true;
	}

	/**
	 * A sixth of the long runs, still dozens of windows: a connection per request (see DynamoDbClients) makes each
	 * request slower, and the arithmetic they check is the blocking suite's (the decisions are written once).
	 */
	@Override
	protected double longRunShare() {
		return 1.0 / 6;
	}

}
