package io.github.ratelimit.aop;

import java.security.Principal;
import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.RateLimitedMethods;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * What the policy catalogue reads reflectively at run time, for native images: the methods of every bean class with
 * {@code @RateLimited} (found, with their annotations and parameter names, when the context starts), and the public
 * methods of {@code #principal}, which key and cost expressions often call (each web stack registers its own
 * {@code #request}). Registered in {@code META-INF/spring/aot.factories}. Expressions that call methods of other
 * types need hints of the application's own.
 */
class RateLimitedRuntimeHints implements BeanFactoryInitializationAotProcessor {

	@Override
	public @Nullable BeanFactoryInitializationAotContribution processAheadOfTime(
			ConfigurableListableBeanFactory beanFactory) {
		List<Class<?>> limited = new ArrayList<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type != null) {
				Class<?> userClass = ClassUtils.getUserClass(type);
				if (RateLimitedMethods.hasRateLimitedMethods(userClass) && !limited.contains(userClass)) {
					limited.add(userClass);
				}
			}
		}
		return (generationContext, code) -> {
			// The annotations are read as JDK proxies.
			generationContext.getRuntimeHints().proxies().registerJdkProxy(RateLimited.class);
			ReflectionHints reflection = generationContext.getRuntimeHints().reflection();
			for (Class<?> type : limited) {
				// Annotated methods may be inherited: every class and interface above gives its own.
				for (Class<?> level : ClassUtils.getAllInterfacesForClassAsSet(type)) {
					reflection.registerType(level, MemberCategory.INVOKE_DECLARED_METHODS);
				}
				for (Class<?> level = type; level != null && level != Object.class; level = level.getSuperclass()) {
					reflection.registerType(level, MemberCategory.INVOKE_DECLARED_METHODS);
				}
			}
			reflection.registerType(Principal.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		};
	}

}
