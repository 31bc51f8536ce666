package io.github.ratelimit.autoconfigure;

import java.util.function.Consumer;

import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.env.Environment;

/**
 * The post-processor that proxies {@code @RateLimited} beans, as each web stack's configuration declares it with its
 * own interceptor.
 */
final class RateLimitedProxies {

	private RateLimitedProxies() {
	}

	static RateLimitedAnnotationBeanPostProcessor postProcessor(ObjectProvider<? extends MethodInterceptor> interceptor,
			Consumer<Class<?>> classCheck, Environment environment) {
		RateLimitedAnnotationBeanPostProcessor postProcessor = new RateLimitedAnnotationBeanPostProcessor(interceptor,
				classCheck);
		// As Spring Boot does for its own proxies: class-based unless spring.aop.proxy-target-class=false.
		postProcessor.setProxyTargetClass(environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
		return postProcessor;
	}

}
