/**
 * Test support: a real Redis, a real Redis Cluster and Sentinel group, dynalite (a DynamoDB-API server), and a TCP
 * proxy that drops responses or holds traffic, for integration tests.
 */
package io.github.ratelimit.test;
