/**
 * Test support: a real Redis and a real Redis Cluster for integration tests.
 */
package io.github.ratelimit.test;
